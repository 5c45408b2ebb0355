package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// rereadChunk is about how many bytes of lines decodeFile reads before
// decoding them (in parallel, decodeLines): what it holds besides the
// events decoded so far.
var rereadChunk = 4 << 20 // a variable for the tests

// decodeFile decodes the first n event lines of the log at path, whose
// header and those lines are its first size bytes (what ReadLogLazy
// checked, under the lock the session still holds; later lines are the
// store's own). It reads the file again a chunk at a time and keeps only
// the events. A line that no longer decodes with its sequence number, or
// a file changed as eachLine tells, is a *CorruptError.
func decodeFile(path string, n int, size int64) ([]Event, error) {
	events := make([]Event, 0, n)
	var chunk []line
	held := 0
	flush := func() error {
		evs, bad := decodeLines(chunk, int64(len(events)))
		if bad.index >= 0 {
			return &CorruptError{Path: path, Line: len(events) + bad.index + 2, Reason: bad.err.Error()}
		}
		events = append(events, evs...)
		chunk, held = chunk[:0], 0
		return nil
	}
	err := eachLine(path, n, size, func(_ int, text []byte) error {
		chunk = append(chunk, line{text: bytes.Clone(text), complete: true})
		if held += len(text) + 1; held >= rereadChunk {
			return flush()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return events, nil
}

// eachLine reads the log at path again, a line at a time, and calls f
// with each of its first n event lines (i from 0; text without its
// newline, valid during the call only), stopping at f's first error,
// which it returns. The header and those lines must be the file's first
// size bytes, as a lazy read found them: a file that ends early, or holds
// more lines in those bytes, is a *CorruptError (the log changed since it
// was read).
func eachLine(path string, n int, size int64, f func(i int, text []byte) error) error {
	file, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("session: reading %s: %w", path, err)
	}
	defer file.Close()
	lr := newLineReader(io.LimitReader(file, size))
	// next is lr.next with a missing line (or one without its newline) a
	// *CorruptError at 1-based line no.
	next := func(no int, why string) ([]byte, error) {
		ln, err := lr.next()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("session: reading %s: %w", path, err)
		}
		if err != nil || !ln.complete {
			return nil, &CorruptError{Path: path, Line: no, Reason: "the log changed since it was read: " + why}
		}
		return ln.text, nil
	}
	if _, err := next(1, "no header line"); err != nil {
		return err
	}
	for i := range n {
		text, err := next(i+2, "it ends early")
		if err != nil {
			return err
		}
		if err := f(i, text); err != nil {
			return err
		}
	}
	switch _, err := lr.next(); {
	case err == nil:
		return &CorruptError{Path: path, Line: n + 2, Reason: "the log changed since it was read: it holds more lines than were read"}
	case !errors.Is(err, io.EOF):
		return fmt.Errorf("session: reading %s: %w", path, err)
	}
	return nil
}
