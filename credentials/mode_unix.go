//go:build !windows

package credentials

import (
	"fmt"
	"io/fs"
)

// checkMode refuses a file other users may read or write: the key in it
// is as good as theirs.
func checkMode(st fs.FileInfo) error {
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("is open to other users (mode %04o; `chmod 600` it)", perm)
	}
	return nil
}
