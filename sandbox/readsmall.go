package sandbox

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// readSmall reads the regular file path if it holds at most limit bytes:
// a directory, a fifo (opened without waiting for a writer) or a device
// such as /dev/zero is an error without being read, and so is a longer
// file, read no further than limit+1 bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New(path + ": not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = errors.New(path + ": longer than the largest answer")
	}
	return b, err
}
