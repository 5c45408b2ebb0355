package session

import (
	"bufio"
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
// a file shorter than size or with other line ends, is a *CorruptError.
func decodeFile(path string, n int, size int64) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session: reading %s: %w", path, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, size), 64<<10)
	changed := func(line int, why string) error {
		return &CorruptError{Path: path, Line: line, Reason: "the log changed since it was read: " + why}
	}
	if _, err := r.ReadBytes('\n'); err != nil {
		return nil, changed(1, "no header line")
	}
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
	for i := range n {
		b, err := r.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, changed(i+2, "it ends early")
			}
			return nil, fmt.Errorf("session: reading %s: %w", path, err)
		}
		chunk = append(chunk, line{text: b[:len(b)-1], complete: true})
		if held += len(b); held >= rereadChunk {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, changed(n+2, "it holds more lines than were read")
	}
	return events, nil
}
