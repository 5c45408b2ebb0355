package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// rereadChunk is about how many bytes of lines readLines reads before
// handing them on: what it holds besides what its caller keeps.
var rereadChunk = 4 << 20 // a variable for the tests

// readLines reads the log at path again: its header and first n event
// lines, which are its first size bytes (what ReadLogLazy checked, under
// the lock the session still holds; later lines are the store's own).
// It calls chunk with the lines in order, a few MiB at a time (base: the
// index of the first), and stops at chunk's first error, which it
// returns. A file shorter than size or with other line ends is a
// *CorruptError.
func readLines(path string, n int, size int64, chunk func(lines []line, base int) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("session: reading %s: %w", path, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, size), 64<<10)
	changed := func(line int, why string) error {
		return &CorruptError{Path: path, Line: line, Reason: "the log changed since it was read: " + why}
	}
	if _, err := r.ReadBytes('\n'); err != nil {
		return changed(1, "no header line")
	}
	var lines []line
	base, held := 0, 0
	for i := range n {
		b, err := r.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return changed(i+2, "it ends early")
			}
			return fmt.Errorf("session: reading %s: %w", path, err)
		}
		lines = append(lines, line{text: b[:len(b)-1], complete: true})
		if held += len(b); held >= rereadChunk || i == n-1 {
			if err := chunk(lines, base); err != nil {
				return err
			}
			base += len(lines)
			lines, held = lines[:0], 0
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return changed(n+2, "it holds more lines than were read")
	}
	return nil
}

// decodeFile decodes the first n event lines of the log at path (see
// readLines), in parallel a chunk at a time, keeping only the events. A
// line that no longer decodes with its sequence number is a
// *CorruptError, as are readLines' changes.
func decodeFile(path string, n int, size int64) ([]Event, error) {
	events := make([]Event, 0, n)
	err := readLines(path, n, size, func(lines []line, base int) error {
		evs, bad := decodeLines(lines, int64(base))
		if bad.index >= 0 {
			return &CorruptError{Path: path, Line: base + bad.index + 2, Reason: bad.err.Error()}
		}
		events = append(events, evs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return events, nil
}
