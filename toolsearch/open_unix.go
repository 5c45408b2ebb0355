//go:build unix

package toolsearch

import (
	"io"
	"syscall"
)

// rawFile reads a file through its descriptor alone. os.Open costs
// four fcntl calls and an epoll registration per file on Linux, more
// than the search of a small file itself; a search opens every file of
// the tree once.
type rawFile struct{ fd int }

// openRead opens path for reading. O_NONBLOCK keeps a FIFO put in the
// place of a walked file from blocking the search (a regular file
// ignores the flag).
func openRead(path string) (*rawFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &pathError{op: "open", path: path, err: err}
		}
		return &rawFile{fd: fd}, nil
	}
}

// Read implements io.Reader; io.EOF at the end.
func (f *rawFile) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(f.fd, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

// Close closes the descriptor.
func (f *rawFile) Close() error { return syscall.Close(f.fd) }
