package toolfs

import (
	"io/fs"
	"syscall"
)

// changeTime is the file's status change time (ctime) in nanoseconds,
// which a write cannot set back; 0 when the stat has none.
func changeTime(fi fs.FileInfo) int64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	return st.Ctim.Nano()
}
