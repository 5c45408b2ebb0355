package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxKeptLine is the largest buffer a lineReader keeps for the next line
// after a line longer than its bufio buffer, in bytes: a bigger one, left
// by one big line, is let go.
const maxKeptLine = 1 << 20

// lineReader reads a log file a line at a time, holding one line (and
// its 64 KiB read buffer), not the file.
type lineReader struct {
	r    *bufio.Reader
	long []byte // a line longer than r's buffer, put together
	read int64  // the bytes returned so far, newlines included
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its newline (complete false for a
// last line that has none). Its text is valid until the next call. At
// the end of the input it returns io.EOF; other errors are the reader's.
func (lr *lineReader) next() (line, error) {
	if cap(lr.long) > maxKeptLine {
		lr.long = nil
	}
	b, err := lr.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		lr.long = append(lr.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = lr.r.ReadSlice('\n')
			lr.long = append(lr.long, b...)
		}
		b = lr.long
	}
	lr.read += int64(len(b))
	switch {
	case err == nil:
		return line{text: b[:len(b)-1], complete: true}, nil
	case errors.Is(err, io.EOF) && len(b) > 0:
		return line{text: b}, nil
	}
	return line{}, err
}

// scanLog is ReadLogLazy's fast path: it reads the log at path a line
// at a time and keeps only the events want accepts, checking every
// line's envelope (its type, its sequence number, its newline) and
// decoding the last line, so the log is known to need no repair. ok is
// false when the log must be read whole instead (a bad header, a bad or
// foreign line, a torn end, an open turn); err is set only when the file
// cannot be read.
func scanLog(path string, want func(string) bool) (l *Loaded, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("session: reading %s: %w", path, err)
	}
	defer f.Close()
	readErr := func(err error) error { return fmt.Errorf("session: reading %s: %w", path, err) }
	lr := newLineReader(f)
	head, err := lr.next()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, readErr(err)
	}
	l = &Loaded{Path: path, Lazy: true}
	if err != nil || !head.complete || parseHeader(head.text, &l.Header) != nil {
		return nil, false, nil
	}
	var last []byte // the last line not decoded, copied
	lastDecoded, open, n := false, false, 0
	for ; ; n++ {
		ln, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, readErr(err)
		}
		typ, seq, ok := envelope(ln.text)
		if !ok || !ln.complete || seq != int64(n) || decoders[string(typ)] == nil {
			return nil, false, nil
		}
		switch string(typ) {
		case "turn/start":
			open = true
		case "turn/end":
			open = false
		}
		if lastDecoded = want(string(typ)); !lastDecoded {
			last = append(last[:0], ln.text...)
			continue
		}
		ev, err := parseEvent(ln, int64(n))
		if err != nil {
			return nil, false, nil
		}
		l.Selected = append(l.Selected, ev)
	}
	if open {
		return nil, false, nil
	}
	if n > 0 && !lastDecoded {
		if _, err := parseEvent(line{text: last, complete: true}, int64(n-1)); err != nil {
			return nil, false, nil
		}
	}
	l.n, l.size, l.Keep = n, lr.read, lr.read
	return l, true, nil
}

// eachBatch is about how many bytes of lines eachLazy decodes into one
// batch of events; it decodes at most two batches ahead of its callback.
const eachBatch = 256 << 10

// errEachStopped ends eachLazy's decoding when its callback has failed.
var errEachStopped = errors.New("session: stopped")

// eachLazy is Each of a Lazy log: one goroutine, which it owns and waits
// for, reads the file again (eachLine) and decodes its lines in batches
// of about eachBatch bytes, while f is called with the events of the
// batches before, in order, on the caller's goroutine; so decoding the
// log and what f does with its events (a replay's updates) overlap. When
// f fails the decoding stops.
func (l *Loaded) eachLazy(f func(Event) error) error {
	batches := make(chan []Event, 1)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		defer close(batches)
		var evs []Event
		held := 0
		send := func() bool {
			select {
			case batches <- evs:
				evs, held = nil, 0
				return true
			case <-stop:
				return false
			}
		}
		err := eachLine(l.Path, l.n, l.Keep, func(i int, text []byte) error {
			ev, err := parseEvent(line{text: text, complete: true}, int64(i))
			if err != nil {
				return &CorruptError{Path: l.Path, Line: i + 2, Reason: err.Error()}
			}
			evs = append(evs, ev)
			if held += len(text) + 1; held >= eachBatch && !send() {
				return errEachStopped
			}
			return nil
		})
		if err != errEachStopped && len(evs) > 0 && !send() {
			err = errEachStopped
		}
		done <- err
	}()
	for evs := range batches {
		for _, ev := range evs {
			if err := f(ev); err != nil {
				close(stop)
				for range batches {
				}
				<-done
				return err
			}
		}
	}
	return <-done
}
