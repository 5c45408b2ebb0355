package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
)

// CorruptError says a session log cannot be loaded: a bad header, or a
// bad line before the last one. Line is 1-based (the header is line 1),
// 0 when the problem is not one line.
type CorruptError struct {
	Path   string
	Line   int
	Reason string
}

func (e *CorruptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("session log %s is corrupt at line %d: %s", e.Path, e.Line, e.Reason)
	}
	return fmt.Sprintf("session log %s is corrupt: %s", e.Path, e.Reason)
}

// Loaded is a session log as read, with the crash repair it needs (not
// yet written: see Open).
type Loaded struct {
	Path   string
	Header Header
	// Events are the logged events (Seq 0..), followed by the Synthetic
	// events of the repair.
	Events []Event
	// Synthetic is how many events at the end of Events the repair
	// added to close an open turn.
	Synthetic int
	// Keep is how many bytes of the file are kept: the file's size unless
	// its last line is torn (no newline, unparsable, or out of sequence)
	// and dropped.
	Keep int64
	// Backup is the path of the copy of the user's log Open made before
	// writing the repair; "" when there was nothing to repair.
	Backup string
	// Lazy is set by ReadLogLazy when the log needed no repair: Events
	// is then nil, Selected holds the events of the types asked for, and
	// the rest are decoded by the Store (NewStore) when first needed.
	Lazy bool
	// Selected are the events of the types ReadLogLazy was asked for, in
	// order (set by ReadLogLazy only, lazily or not).
	Selected []Event
	// data is the file as read (nil for a Lazy log, which is read a line
	// at a time and not kept), and size its size in bytes.
	data []byte
	size int64
	// lock is the log's lock, from ReadLogLocked until Open.
	lock *Lock
	// n is the number of event lines of a Lazy log.
	n int
}

// NeedsRepair reports whether the file differs from Events: a torn last
// line to drop, or synthetic events to append.
func (l *Loaded) NeedsRepair() bool {
	return l.Keep != l.size || l.Synthetic > 0
}

// Dropped is the number of bytes of the torn last line (0 when none).
func (l *Loaded) Dropped() int64 { return l.size - l.Keep }

// ReadLog reads the session log at path and works out its crash repair:
// a torn last line is dropped and an open final turn is closed (see
// Repair). A missing file is an error wrapping os.ErrNotExist; a header
// that is not a complete `session` line of FormatVersion, or a bad line
// before the last one, is a *CorruptError. The file is not changed.
func ReadLog(path string) (*Loaded, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("session: reading %s: %w", path, err)
	}
	return parseLog(path, data)
}

// ReadLogLazy reads the log at path as ReadLog does, but decodes only the
// events whose type want accepts (want gets the event type, e.g.
// "mode/change"): what reopening a session without replaying it needs.
// The file is read a line at a time and not kept. Every line's envelope
// is still checked (its type, its sequence number, its newline) and the
// last line is decoded, so the log is known to need no repair; the other
// events are decoded by the Store that NewStore returns, the first time
// they are needed, or by Each, from the file read again. A log that needs
// repair, or that has lines in another shape than Log writes, is read
// whole as ReadLog reads it (Lazy false, Events set). Errors are
// ReadLog's; a bad payload in a line not decoded here surfaces later,
// from Store.Ready or Each, as a *CorruptError.
func ReadLogLazy(path string, want func(typ string) bool) (*Loaded, error) {
	if l, ok, err := scanLog(path, want); ok || err != nil {
		return l, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("session: reading %s: %w", path, err)
	}
	l, err := parseLog(path, data)
	if err != nil {
		return nil, err
	}
	for _, ev := range l.Events {
		if want(ev.Data.EventType()) {
			l.Selected = append(l.Selected, ev)
		}
	}
	return l, nil
}

// envelope reads the type and sequence number of an event line in the
// shape Log writes; ok is false for any other shape.
func envelope(text []byte) (typ []byte, seq int64, ok bool) {
	typ, rest, ok := cutQuoted(text, `{"type":"`)
	if ok {
		seq, rest, ok = cutInt(rest, `,"seq":`)
	}
	if ok {
		_, rest, ok = cutInt(rest, `,"time":`)
	}
	if ok {
		rest, ok = bytes.CutPrefix(rest, []byte(`,"data":`))
	}
	return typ, seq, ok && len(rest) > 0 && rest[len(rest)-1] == '}'
}

// NewStore returns a store that continues the log as read, appending to
// log (nil: in memory only) and passing events to sink: with Events in
// memory, or, for a Lazy log, with the events decoded on first need (see
// Store.Ready), from the file read again.
func (l *Loaded) NewStore(log *Log, sink Sink) *Store {
	if !l.Lazy {
		return NewLoggedStore(l.Events, log, sink)
	}
	n, path, size := l.n, l.Path, l.Keep
	st := NewLoggedStore(nil, log, sink)
	st.n = n
	// The events are decoded from the file, read again, not from the
	// bytes read now: those are let go when the reopening is done, so a
	// resumed session does not hold its whole log in memory until its
	// first prompt, nor the log and its decoded events at once then.
	st.pending = func() ([]Event, error) { return decodeFile(path, n, size) }
	return st
}

// Each calls f with the log's events in order (Events, then nothing
// else: the Synthetic ones are among them) and stops at f's first error,
// which it returns. A Lazy log's events are decoded from the file, read
// again a line at a time, a little ahead of f and not kept (eachLazy), so
// a replay of a long log holds a few hundred KiB of events, neither the
// file nor all its events; a bad line among them, or a file changed since
// it was read, is a *CorruptError (Store.Ready would report it too),
// after f has had the events before it.
func (l *Loaded) Each(f func(Event) error) error {
	if !l.Lazy {
		for _, ev := range l.Events {
			if err := f(ev); err != nil {
				return err
			}
		}
		return nil
	}
	return l.eachLazy(f)
}

// parseLog is ReadLog on the file's bytes.
func parseLog(path string, data []byte) (*Loaded, error) {
	l := &Loaded{Path: path, data: data, size: int64(len(data))}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, &CorruptError{Path: path, Line: 1, Reason: "the header line is incomplete"}
	}
	if err := parseHeader(data[:nl], &l.Header); err != nil {
		return nil, &CorruptError{Path: path, Line: 1, Reason: err.Error()}
	}
	lines := splitLines(data[nl+1:])
	events, bad := decodeLines(lines, 0)
	off := int64(nl + 1)
	l.Events = events
	for i, line := range lines {
		if i == bad.index {
			if i < len(lines)-1 {
				return nil, &CorruptError{Path: path, Line: i + 2, Reason: bad.err.Error()}
			}
			l.Events = events[:i] // the torn last line: dropped
			break
		}
		off += int64(len(line.text)) + 1
	}
	l.Keep = off
	l.Synthetic = len(l.Events)
	l.Events = Repair(l.Events)
	l.Synthetic = len(l.Events) - l.Synthetic
	return l, nil
}

// parseHeader decodes and checks a header line.
func parseHeader(line []byte, h *Header) error {
	if err := json.Unmarshal(line, h); err != nil {
		return fmt.Errorf("bad header: %w", err)
	}
	if h.Type != headerType {
		return fmt.Errorf("bad header: type %q, want %q", h.Type, headerType)
	}
	if h.Version != FormatVersion {
		return fmt.Errorf("unsupported log format version %d (this program reads version %d)", h.Version, FormatVersion)
	}
	if h.ID == "" {
		return errors.New("bad header: no session id")
	}
	return nil
}

// line is one event line of a log, without its newline; complete is
// false for a last line that has none.
type line struct {
	text     []byte
	complete bool
}

// splitLines cuts the event part of a log into lines.
func splitLines(data []byte) []line {
	out := make([]line, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, line{text: data})
			break
		}
		out = append(out, line{text: data[:i], complete: true})
		data = data[i+1:]
	}
	return out
}

// badLine is the first line that did not decode (index -1: none).
type badLine struct {
	index int
	err   error
}

// decodeLines decodes every line, the line at index i having sequence
// number base+i, on up to GOMAXPROCS goroutines (joined before it
// returns). It returns the events and the first bad line (its index in
// lines).
func decodeLines(lines []line, base int64) ([]Event, badLine) {
	events := make([]Event, len(lines))
	errs := make([]error, len(lines))
	workers := min(runtime.GOMAXPROCS(0), len(lines)/512+1)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(lines)/workers, (w+1)*len(lines)/workers
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				events[i], errs[i] = parseEvent(lines[i], base+int64(i))
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return events, badLine{i, err}
		}
	}
	return events, badLine{index: -1}
}

// parseEvent decodes one event line that must have sequence number seq.
func parseEvent(l line, seq int64) (Event, error) {
	if !l.complete {
		return Event{}, errors.New("the line has no newline")
	}
	ev, err := decodeEvent(l.text)
	if err != nil {
		return ev, err
	}
	if ev.Seq != seq {
		return ev, fmt.Errorf("seq %d where %d was expected", ev.Seq, seq)
	}
	return ev, nil
}

// decodeEvent decodes an event line. A line in the exact shape Log
// writes (`{"type":"T","seq":N,"time":N,"data":...}`) has its envelope
// read directly and only the payload decoded; any other line goes through
// Event.UnmarshalJSON.
func decodeEvent(text []byte) (Event, error) {
	var ev Event
	typ, rest, ok := cutQuoted(text, `{"type":"`)
	var seq, tm int64
	if ok {
		seq, rest, ok = cutInt(rest, `,"seq":`)
	}
	if ok {
		tm, rest, ok = cutInt(rest, `,"time":`)
	}
	if ok {
		rest, ok = bytes.CutPrefix(rest, []byte(`,"data":`))
	}
	dec := decoders[string(typ)]
	if !ok || dec == nil || len(rest) == 0 || rest[len(rest)-1] != '}' {
		err := json.Unmarshal(text, &ev)
		return ev, err
	}
	d, err := dec(rest[:len(rest)-1])
	if err != nil {
		return ev, fmt.Errorf("session: decoding %s: %w", typ, err)
	}
	ev.Seq, ev.Time, ev.Data = seq, tm, d
	return ev, nil
}

// cutQuoted reads prefix, then a string without escapes up to its closing
// quote; it returns the string and what follows the quote.
func cutQuoted(b []byte, prefix string) (s, rest []byte, ok bool) {
	b, ok = bytes.CutPrefix(b, []byte(prefix))
	if !ok {
		return nil, nil, false
	}
	i := bytes.IndexByte(b, '"')
	if i < 0 || bytes.IndexByte(b[:i], '\\') >= 0 {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}

// cutInt reads prefix, then a decimal integer (optionally negative).
func cutInt(b []byte, prefix string) (n int64, rest []byte, ok bool) {
	b, ok = bytes.CutPrefix(b, []byte(prefix))
	if !ok {
		return 0, nil, false
	}
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(string(b[:i]), 10, 64)
	return n, b[i:], err == nil
}
