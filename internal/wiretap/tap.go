// Package wiretap watches the ACP messages on the agent's pipes, line by
// line, in one place: with a debug logger it logs each
// message's direction, kind, method, id and size, never its contents; with
// a trace writer it writes each message, its secrets redacted (Redactor),
// as one JSON line, for bug reports. It wraps the agent's stdin and
// stdout as io.Reader and io.Writer, so it sees exactly the bytes on the
// pipes, lines the connection refuses included, and changes nothing that
// passes through.
//
// A trace line is
//
//	{"time":"2006-01-02T15:04:05.000Z","pid":N,"dir":"in","bytes":N,"message":{…}}
//
// with dir "in" (from the editor, stdin) or "out" (to the editor, stdout),
// bytes the message's length without its newline, and the message as
// sent, redacted; a line that is not JSON has "text" (redacted) instead of
// "message", and one longer than MaxLine has neither (only its size).
package wiretap

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// MaxLine is the longest line the tap keeps to inspect, in bytes: a
// longer message is counted and logged with its size only (it is still
// passed through whole).
const MaxLine = 8 << 20

// maxPending bounds the request ids remembered to name the method of
// their responses.
const maxPending = 4096

// Options configure a Tap.
type Options struct {
	// Log, when it is enabled for slog.LevelDebug, gets one record per
	// message: "acp message" with dir, kind (request, notification,
	// response, error, invalid, oversized), method (for a response, its
	// request's, when seen), id (at most 64 bytes of it) and bytes.
	Log *slog.Logger
	// Trace, when set, gets one JSON line per message (see the package
	// doc), each in one Write call.
	Trace io.Writer
	// Redactor redacts traced messages; nil redacts by its default rules.
	Redactor *Redactor
	// PID is written in every trace line (several agents may share one
	// trace file).
	PID int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Tap watches one connection. Use Reader and Writer on the agent's pipes.
type Tap struct {
	o     Options
	debug bool

	mu      sync.Mutex
	pending map[string]string // "in:<id>" / "out:<id>" of requests -> method
	buf     bytes.Buffer      // a trace line being built
	failed  bool              // the trace writer failed: tracing stopped
}

// New returns a tap. It does nothing per message when o has neither a
// debug logger nor a trace.
func New(o Options) *Tap {
	if o.Redactor == nil {
		o.Redactor = &Redactor{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	t := &Tap{o: o, pending: map[string]string{}}
	t.debug = o.Log != nil && o.Log.Enabled(context.Background(), slog.LevelDebug)
	return t
}

// Active reports whether the tap logs or traces anything.
func (t *Tap) Active() bool { return t.debug || t.o.Trace != nil }

// Reader returns r watched: what is read from it are the editor's
// messages ("in").
func (t *Tap) Reader(r io.Reader) io.Reader { return &tapReader{r: r, lines: lines{t: t, dir: "in"}} }

// Writer returns w watched: what is written to it are the agent's
// messages ("out").
func (t *Tap) Writer(w io.Writer) io.Writer { return &tapWriter{w: w, lines: lines{t: t, dir: "out"}} }

type tapReader struct {
	r io.Reader
	lines
}

func (x *tapReader) Read(p []byte) (int, error) {
	n, err := x.r.Read(p)
	x.feed(p[:n])
	if err != nil {
		x.flush() // a last line without a newline is a message too
	}
	return n, err
}

type tapWriter struct {
	w io.Writer
	lines
}

func (x *tapWriter) Write(p []byte) (int, error) {
	n, err := x.w.Write(p)
	x.feed(p[:n])
	return n, err
}

// lines splits one direction's bytes into lines. Used by one goroutine
// at a time (the connection reads on one goroutine and writes under one
// lock).
type lines struct {
	t    *Tap
	dir  string
	cur  []byte
	size int64 // bytes of the current line, kept or not
	over bool  // the current line passed MaxLine: not kept
}

func (l *lines) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		l.size += int64(len(part))
		if !l.over {
			if len(l.cur)+len(part) > MaxLine {
				l.over, l.cur = true, nil
			} else {
				l.cur = append(l.cur, part...)
			}
		}
		if i < 0 {
			return
		}
		l.flush()
		p = p[i+1:]
	}
}

// flush ends the current line.
func (l *lines) flush() {
	if l.size > 0 {
		l.t.message(l.dir, bytes.TrimRight(l.cur, "\r"), l.size, l.over)
	}
	l.cur, l.size, l.over = l.cur[:0], 0, false
	if cap(l.cur) > 1<<20 {
		l.cur = nil // do not keep a big line's buffer
	}
}

// probe is what the debug record reads of a message.
type probe struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// message handles one line of dir.
func (t *Tap) message(dir string, line []byte, size int64, over bool) {
	if len(bytes.TrimSpace(line)) == 0 && !over {
		return
	}
	if t.debug {
		t.logMessage(dir, line, size, over)
	}
	if t.o.Trace != nil {
		t.trace(dir, line, size, over)
	}
}

func (t *Tap) logMessage(dir string, line []byte, size int64, over bool) {
	kind, method, id := "oversized", "", ""
	var p probe
	switch {
	case over:
	case json.Unmarshal(line, &p) != nil:
		kind = "invalid"
	default:
		id = string(p.ID)
		if len(id) > 64 {
			id = id[:64] + "…"
		}
		t.mu.Lock()
		switch {
		case p.Method != nil && len(p.ID) > 0 && string(p.ID) != "null":
			kind, method = "request", *p.Method
			if len(t.pending) >= maxPending {
				clear(t.pending)
			}
			t.pending[dir+":"+string(p.ID)] = method
		case p.Method != nil:
			kind, method = "notification", *p.Method
		case p.Error != nil || p.Result != nil:
			kind = "response"
			if p.Error != nil {
				kind = "error"
			}
			other := "in:"
			if dir == "in" {
				other = "out:"
			}
			method = t.pending[other+string(p.ID)]
			delete(t.pending, other+string(p.ID))
		default:
			kind = "invalid"
		}
		t.mu.Unlock()
	}
	attrs := []any{"dir", dir, "kind", kind}
	if method != "" {
		attrs = append(attrs, "method", method)
	}
	if id != "" {
		attrs = append(attrs, "id", id)
	}
	t.o.Log.Debug("acp message", append(attrs, "bytes", size)...)
}

func (t *Tap) trace(dir string, line []byte, size int64, over bool) {
	var msg json.RawMessage
	text := ""
	if !over {
		var ok bool
		if msg, ok = t.o.Redactor.Message(line); !ok {
			text = t.o.Redactor.Text(string(line))
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed {
		return
	}
	b := &t.buf
	b.Reset()
	b.WriteString(`{"time":"`)
	b.WriteString(t.o.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	b.WriteString(`","pid":`)
	b.WriteString(strconv.Itoa(t.o.PID))
	b.WriteString(`,"dir":"`)
	b.WriteString(dir)
	b.WriteString(`","bytes":`)
	b.WriteString(strconv.FormatInt(size, 10))
	switch {
	case msg != nil:
		b.WriteString(`,"message":`)
		b.Write(msg)
	case !over:
		b.WriteString(`,"text":`)
		writeString(b, text)
	}
	b.WriteString("}\n")
	if _, err := t.o.Trace.Write(b.Bytes()); err != nil {
		t.failed = true
		if t.o.Log != nil {
			t.o.Log.Warn("the trace could not be written; tracing stopped", "err", err)
		}
	}
	if b.Cap() > 1<<20 {
		t.buf = bytes.Buffer{}
	}
}
