package packaging

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// File is one file of an archive: its name at the archive's root, its
// content, and whether it is executable (mode 0755, else 0644).
type File struct {
	Name string
	Data []byte
	Exec bool
}

// WriteArchive writes files to path as a .tar.gz or a .zip (by path's
// extension), sorted by name, every entry dated mtime and owned by 0:0,
// so the same inputs give the same bytes (the gzip header has no name or
// time). Other extensions are an error.
func WriteArchive(path string, files []File, mtime time.Time) error {
	files = append([]File(nil), files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	var b bytes.Buffer
	switch {
	case strings.HasSuffix(path, ".tar.gz"):
		if err := writeTarGz(&b, files, mtime); err != nil {
			return err
		}
	case strings.HasSuffix(path, ".zip"):
		if err := writeZip(&b, files, mtime); err != nil {
			return err
		}
	default:
		return fmt.Errorf("archive %s: want .tar.gz or .zip", path)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func mode(f File) int64 {
	if f.Exec {
		return 0o755
	}
	return 0o644
}

func writeTarGz(w io.Writer, files []File, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		// USTAR: no access or change times, nothing but what is set here.
		h := &tar.Header{Name: f.Name, Mode: mode(f), Size: int64(len(f.Data)), ModTime: mtime.UTC(),
			Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, files []File, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: mtime.UTC()}
		h.SetMode(os.FileMode(mode(f)))
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.Data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// WriteChecksums writes, to path, one `sha256sum` line per file
// ("HEX  NAME", two spaces, the base name), in the order given.
func WriteChecksums(path string, files []string) error {
	var b strings.Builder
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), filepath.Base(p))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
