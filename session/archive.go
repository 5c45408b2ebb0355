package session

import (
	"errors"
	"fmt"
	"os"
)

// A log's archive mark: an empty file beside the log (ArchivedPath)
// whose presence means the session is archived, hidden from the default
// session list but kept, log and all. It is a mark beside the log, not an
// event in it, so that archiving a session another process has open, or
// listing, needs no lock and reads no log.

// ArchivedPath is the archive mark of the log at logPath: logPath +
// ".archived".
func ArchivedPath(logPath string) string { return logPath + ".archived" }

// IsArchived reports whether the log at logPath carries the archive mark
// (one stat).
func IsArchived(logPath string) bool {
	_, err := os.Lstat(ArchivedPath(logPath))
	return err == nil
}

// SetArchived sets (on) or removes the archive mark of the log at
// logPath; setting a set mark or removing an absent one does nothing.
// The log must exist (else ErrNotFound).
func SetArchived(logPath string, on bool) error {
	if _, err := os.Lstat(logPath); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("session log %s: %w", logPath, ErrNotFound)
	}
	p := ArchivedPath(logPath)
	if !on {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("session: unarchiving: %w", err)
		}
		return nil
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, filePerm)
	if err != nil {
		return fmt.Errorf("session: archiving: %w", err)
	}
	return f.Close()
}
