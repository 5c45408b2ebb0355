package session

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tempPrefix is the name prefix of the temporary file that replaces
// the file named base (replaceFile): hidden, and recognisable by Sweep
// and sidecarOf as belonging to base.
func tempPrefix(base string) string { return "." + strings.TrimPrefix(base, ".") + ".tmp-" }

// replaceFile replaces path with data, so a reader sees the old content
// or the new, never a part: a temporary file beside it (mode 0600, named
// tempPrefix plus a random part), synced first when durable is set,
// renamed over it. The temporary file is removed on failure; one a crash
// left is removed by Sweep.
func replaceFile(path string, data []byte, durable bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), tempPrefix(filepath.Base(path)))
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if durable && err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// staleTemp is how old a temporary file of the list index must be for
// Sweep to remove it: younger, another process may be about to rename it.
const staleTemp = time.Minute

// sweepIndexTemps removes the list index's temporary files under root
// that a crash left (older than staleTemp); it returns how many.
func sweepIndexTemps(root string) int {
	names, _ := filepath.Glob(filepath.Join(root, globEscape(tempPrefix(IndexFile))+"*"))
	n := 0
	for _, p := range names {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) > staleTemp && os.Remove(p) == nil {
			n++
		}
	}
	return n
}
