package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// A log's title file: the title the session has now, beside its log
// (TitlePath), so that session/list reads a header line and one small
// file per log instead of the whole log, wherever in it the last Title
// is (a model's title comes after the first turn, a user's at any time).
// The log is the truth, the title file a copy: the Log writes it before
// the Title's line (a list that sees the line also sees the file), and
// SyncTitleFile puts it right when a crash came between the two.

// titleFileMax bounds what is read of a title file, in bytes: more is
// not a file this package wrote.
const titleFileMax = 64 << 10

// TitlePath is the title file of the log at logPath: logPath + ".title".
func TitlePath(logPath string) string { return logPath + ".title" }

// WriteTitleFile replaces the title file of the log at logPath with t
// (a temporary file renamed over it, mode 0600), so a reader sees the old
// title or the new one, never a part.
func WriteTitleFile(logPath string, t Title) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("session: encoding a title: %w", err)
	}
	path := TitlePath(logPath)
	if err := replaceFile(path, append(b, '\n'), false); err != nil {
		return fmt.Errorf("session: writing the title file %s: %w", path, err)
	}
	return nil
}

// ReadTitleFile returns the title in the title file of the log at
// logPath; ok is false when there is none or it is not one this package
// wrote.
func ReadTitleFile(logPath string) (t Title, ok bool) {
	f, err := os.Open(TitlePath(logPath))
	if err != nil {
		return Title{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, titleFileMax+1))
	if err != nil || len(b) > titleFileMax || json.Unmarshal(b, &t) != nil {
		return Title{}, false
	}
	return t, true
}

// LastTitle returns the last Title among events (the session's title
// after them); ok is false when there is none.
func LastTitle(events []Event) (t Title, ok bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if t, ok := events[i].Data.(Title); ok {
			return t, true
		}
	}
	return Title{}, false
}

// HasUserTitle reports whether events hold a title the user set
// (TitleFromUser): the agent then never writes one of its own.
func HasUserTitle(events []Event) bool {
	for _, ev := range events {
		if t, ok := ev.Data.(Title); ok && t.Source == TitleFromUser {
			return true
		}
	}
	return false
}

// SyncTitleFile makes the title file of the log at logPath hold t, the
// log's last title (rewriting it only when it differs), or removes it
// when the log has none (has false). Call it with the log's lock held.
func SyncTitleFile(logPath string, t Title, has bool) error {
	cur, ok := ReadTitleFile(logPath)
	switch {
	case !has && !ok:
		if _, err := os.Lstat(TitlePath(logPath)); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		fallthrough
	case !has:
		if err := os.Remove(TitlePath(logPath)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("session: removing the title file: %w", err)
		}
		return nil
	case ok && cur == t:
		return nil
	}
	return WriteTitleFile(logPath, t)
}
