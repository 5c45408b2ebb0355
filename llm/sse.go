package llm

import (
	"bytes"
	"errors"
)

// maxEventSize bounds, in bytes, one line and the data of one event, so a
// stream that never sends a newline cannot grow memory without end.
const maxEventSize = 16 << 20

// errEventTooLarge reports a line or event over the framer's limit.
var errEventTooLarge = errors.New("event too large")

// sseFramer cuts a byte stream into server-sent events incrementally. Bytes
// may arrive split anywhere (inside a line, a CRLF pair or a UTF-8 character:
// lines are cut only at '\n', which never occurs inside a multi-byte
// character). Lines end in "\n" or "\r\n"; a blank line ends an event; the
// data lines of an event are joined with "\n"; comments (": ...") and fields
// other than data are ignored, and an event without data yields nothing.
type sseFramer struct {
	line    []byte // the unfinished line carried over from the previous feed
	data    []byte // data of the current event so far
	hasData bool   // the current event has at least one data line
	limit   int    // bound, in bytes, of one line and of one event's data
}

// feed processes p and calls emit with the data of every complete event, in
// order. The slice passed to emit is valid only during the call. When emit
// returns an error, feed stops and returns it; a line or event data over
// limit gives errEventTooLarge.
func (f *sseFramer) feed(p []byte, emit func(data []byte) error) error {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(f.line)+len(p) > f.limit {
				return errEventTooLarge
			}
			f.line = append(f.line, p...)
			return nil
		}
		line := p[:i]
		if len(f.line) > 0 {
			f.line = append(f.line, line...)
			line = f.line
		}
		p = p[i+1:]
		err := f.processLine(line, emit)
		f.line = f.line[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

// processLine handles one line without its "\n".
func (f *sseFramer) processLine(line []byte, emit func([]byte) error) error {
	if len(line) > f.limit {
		return errEventTooLarge
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) == 0 {
		return f.dispatch(emit)
	}
	if line[0] == ':' {
		return nil // comment, e.g. ": keep-alive"
	}
	name, value := line, []byte(nil)
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		name, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	if string(name) != "data" {
		return nil // event:, id:, retry: and unknown fields
	}
	if len(f.data)+len(value) > f.limit {
		return errEventTooLarge
	}
	if f.hasData {
		f.data = append(f.data, '\n')
	}
	f.data = append(f.data, value...)
	f.hasData = true
	return nil
}

// dispatch emits the current event, if it has data, and starts a new one.
func (f *sseFramer) dispatch(emit func([]byte) error) error {
	if !f.hasData {
		return nil
	}
	f.hasData = false
	data := f.data
	f.data = f.data[:0]
	return emit(data)
}

// pending returns the data the unfinished event would carry if the stream
// ended now (its unfinished last line included), and whether it has any data
// line. It does not change the framer.
func (f *sseFramer) pending() ([]byte, bool) {
	line := bytes.TrimSuffix(f.line, []byte("\r"))
	if len(line) == 0 {
		return f.data, f.hasData
	}
	g := sseFramer{data: append([]byte(nil), f.data...), hasData: f.hasData, limit: f.limit}
	_ = g.processLine(line, nil) // a non-blank line never emits
	return g.data, g.hasData
}
