package toolfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// writable is nil unless the file base in dir is read-only (Windows has
// no access(2); the read-only attribute is what the file mode shows).
func writable(d dirFS, dir, base string) error {
	st, err := d.Lstat(filepath.Join(dir, base))
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o200 == 0 {
		return errors.New("the file is read-only")
	}
	return nil
}

// processGone reports whether no process has the id pid: a process that
// cannot be found by id on Windows is gone.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	_ = p.Release()
	return false
}

// keepOwner does nothing on Windows: a new file inherits its directory's
// ACL, and there is no owner to copy through the file mode.
func keepOwner(*os.File, fs.FileInfo) error { return nil }
