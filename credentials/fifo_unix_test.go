//go:build !windows

package credentials

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNamedPipe: a named pipe where the file should be is refused at
// once, not waited on for a writer (every prompt checks the key, so a
// wait would hang them all).
func TestNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "credentials")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := (Store{Path: fifo}).Load("https://x")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load of a named pipe = %v", err)
		}
	case <-time.After(10 * time.Second):
		// Unblock the reader so the test ends.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		<-done
		t.Error("Load of a named pipe waited for a writer")
	}
}
