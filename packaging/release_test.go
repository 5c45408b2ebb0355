package packaging

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestArchives: both formats hold the files at their root with the
// modes asked for, dated mtime, and the same inputs give the same bytes.
func TestArchives(t *testing.T) {
	dir := t.TempDir()
	files := []File{{Name: "README.md", Data: []byte("# hi\n")}, {Name: "dsh-acp", Data: []byte("\x7fELF..."), Exec: true}}
	mtime := time.Unix(1700000000, 0)
	for _, name := range []string{"a.tar.gz", "a.zip"} {
		p := filepath.Join(dir, name)
		if err := WriteArchive(p, files, mtime); err != nil {
			t.Fatal(err)
		}
		first, _ := os.ReadFile(p)
		if err := WriteArchive(p, []File{files[1], files[0]}, mtime); err != nil {
			t.Fatal(err)
		}
		second, _ := os.ReadFile(p)
		if !bytes.Equal(first, second) {
			t.Errorf("%s: two writes of the same files differ", name)
		}
		got := listArchive(t, p)
		want := "README.md 644 5 2023-11-14T22:13:20Z|dsh-acp 755 7 2023-11-14T22:13:20Z"
		if got != want {
			t.Errorf("%s holds %s, want %s", name, got, want)
		}
	}
	if err := WriteArchive(filepath.Join(dir, "a.rar"), files, mtime); err == nil {
		t.Error("a .rar was written")
	}
	sums := filepath.Join(dir, "sums.txt")
	if err := WriteChecksums(sums, []string{filepath.Join(dir, "a.zip")}); err != nil {
		t.Fatal(err)
	}
	zb, _ := os.ReadFile(filepath.Join(dir, "a.zip"))
	h := sha256.Sum256(zb)
	if b, _ := os.ReadFile(sums); string(b) != hex.EncodeToString(h[:])+"  a.zip\n" {
		t.Errorf("checksums file %q", b)
	}
}

// listArchive is "NAME MODE SIZE MTIME" per entry, "|"-joined, in order.
func listArchive(t *testing.T, p string) string {
	t.Helper()
	var out []string
	add := func(name string, mode os.FileMode, size int64, mt time.Time) {
		out = append(out, name+" "+strconv.FormatUint(uint64(mode.Perm()), 8)+" "+strconv.FormatInt(size, 10)+" "+mt.UTC().Format(time.RFC3339))
	}
	if strings.HasSuffix(p, ".zip") {
		zr, err := zip.OpenReader(p)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			add(f.Name, f.Mode(), int64(f.UncompressedSize64), f.Modified)
		}
		return strings.Join(out, "|")
	}
	tr := openTarGz(t, p)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" {
			t.Errorf("%s owned by %d:%d %q", h.Name, h.Uid, h.Gid, h.Uname)
		}
		add(h.Name, h.FileInfo().Mode(), h.Size, h.ModTime)
	}
	return strings.Join(out, "|")
}

// TestReleaseScript runs scripts/release.sh for this machine's target
// (CI builds all six with .ci/run): the archive holds the binary and the
// README, the binary prints the version stamped with -ldflags, the
// checksums file matches, and the committed registry entry is left as it
// is (--no-registry writes nothing in the tree).
func TestReleaseScript(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the release build compiles the agent from scratch with -trimpath; CI runs it")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed for scripts/release.sh")
	}
	v := preparedVersion(t)
	out := t.TempDir()
	target := runtime.GOOS + "/" + runtime.GOARCH
	cmd := exec.Command("bash", "scripts/release.sh", "--out", out, "--targets", target, "--no-registry", "v"+v)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1700000000")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, b)
	}
	var tg Target
	for _, x := range Targets {
		if x.GOOS == runtime.GOOS && x.GOARCH == runtime.GOARCH {
			tg = x
		}
	}
	archive := filepath.Join(out, tg.ArchiveName(v))
	list := listArchive(t, archive)
	if !strings.HasPrefix(list, "README.md 644 ") || !strings.Contains(list, "|"+tg.Exe()+" 755 ") {
		t.Errorf("archive holds %s", list)
	}
	// Unpack the binary and ask its version.
	bin := filepath.Join(t.TempDir(), tg.Exe())
	extract(t, archive, tg.Exe(), bin)
	got, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(got), "dsh-acp "+v+"\n") {
		t.Errorf("--version = %q, %v; want dsh-acp %s", got, err, v)
	}
	sums, _ := os.ReadFile(filepath.Join(out, ChecksumsName(v)))
	ab, _ := os.ReadFile(archive)
	h := sha256.Sum256(ab)
	if string(sums) != hex.EncodeToString(h[:])+"  "+tg.ArchiveName(v)+"\n" {
		t.Errorf("checksums %q", sums)
	}
	if _, err := os.Stat(filepath.Join(out, "agent.json")); err == nil {
		t.Error("--no-registry wrote agent.json")
	}
	// A version the tree does not prepare is refused.
	cmd = exec.Command("bash", "scripts/release.sh", "--out", t.TempDir(), "--targets", target, "--no-registry", "v99.0.0")
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "is not the release this tree prepares") {
		t.Errorf("release.sh v99.0.0 = %v, %s", err, b)
	}
}

// openTarGz opens the .tar.gz archive p for reading (closed when t
// ends) or fails t.
func openTarGz(t *testing.T, p string) *tar.Reader {
	t.Helper()
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	gz, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	return tar.NewReader(gz)
}

// extract copies member name of the .tar.gz archive to dst (mode 0755).
func extract(t *testing.T, archive, name, dst string) {
	t.Helper()
	tr := openTarGz(t, archive)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s not in %s: %v", name, archive, err)
		}
		if h.Name == name {
			b, _ := io.ReadAll(tr)
			if err := os.WriteFile(dst, b, 0o755); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
}
