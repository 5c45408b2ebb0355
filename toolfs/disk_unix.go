//go:build !windows

package toolfs

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// writable reports whether the process may write the file base in dir
// (access(2) with the real ids, relative to the directory opened in d).
func writable(d dirFS, dir, base string) error {
	df, err := d.Open(dir)
	if err != nil {
		return err
	}
	defer df.Close()
	return unix.Faccessat(int(df.Fd()), base, unix.W_OK, 0)
}

// processGone reports whether no process has the id pid (kill(pid, 0)
// fails with ESRCH).
func processGone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

// keepOwner gives f (the rewrite of prev) prev's owner and group when the
// process may (best effort: only a privileged process may give a file
// away), and sets the mode again where chown cleared setuid/setgid.
func keepOwner(f *os.File, prev fs.FileInfo) error {
	st, ok := prev.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	_ = f.Chown(int(st.Uid), int(st.Gid))
	if st.Mode&syscall.S_ISUID != 0 || st.Mode&syscall.S_ISGID != 0 {
		return f.Chmod(prev.Mode() & keptMode)
	}
	return nil
}
