package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// DefaultMaxMessageBytes is the largest message the connection reads, in
// bytes (64 MiB), unless Limits says otherwise: far above real prompts,
// small enough that a hostile line cannot exhaust memory.
const DefaultMaxMessageBytes = 64 << 20

// DefaultMaxQueuedWrites is how many messages may be waiting to be
// written (responses and notifications for a client that does not read
// its input) before the connection stops reading new messages.
const DefaultMaxQueuedWrites = 64

// Limits bound what one connection holds in memory; a zero field means
// its default.
type Limits struct {
	// MaxMessageBytes is the largest message read, in bytes, not
	// counting its newline. A longer line is never held in memory: it is
	// read through in pieces while only its "id" is kept, and answered
	// with -32600 (a request: with its id; a response to one of our calls:
	// that call fails; a notification: logged and dropped). Default
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// MaxQueuedWrites is how many writes may wait for the output at once
	// before reading pauses (backpressure), until the client reads again.
	// Default DefaultMaxQueuedWrites.
	MaxQueuedWrites int
}

func (l Limits) withDefaults() Limits {
	if l.MaxMessageBytes <= 0 {
		l.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if l.MaxQueuedWrites <= 0 {
		l.MaxQueuedWrites = DefaultMaxQueuedWrites
	}
	return l
}

// lineStream is the newline-delimited object stream under the JSON-RPC
// connection (it implements jsonrpc2.ObjectStream). Reading: one message
// per line, of at most Limits.MaxMessageBytes; blank lines and a trailing
// \r are skipped; a line that is not JSON is answered with -32700 and one
// that is not a JSON-RPC message with -32600 (both with id null), and
// reading goes on; reading waits while more than Limits.MaxQueuedWrites
// writes are waiting for the output. Writing: each message is encoded
// once and written with a single Write call under one mutex, so messages
// never interleave and keep the order in which their writers were called.
type lineStream struct {
	r   *bufio.Reader
	log *slog.Logger
	lim Limits

	// onEOF runs on the read goroutine when the input ends, before
	// ReadObject reports io.EOF; the connection uses it to drain.
	onEOF func()

	line []byte // the line being read, reused while small

	aside aside // big params and results kept out of the JSON-RPC library

	// qmu guards queued and stopped; room is signalled when queued drops
	// to the limit or the stream closes.
	qmu     sync.Mutex
	room    *sync.Cond
	queued  int
	stopped bool

	wmu sync.Mutex
	w   io.Writer
	// buf and enc (no HTML escaping) encode what jsonrpc2 writes: the
	// envelopes of responses and requests, whose results and params it
	// has already marshaled with json.Marshal.
	buf bytes.Buffer
	enc *json.Encoder
	// nbuf and nenc (HTML escaping, as json.Marshal) encode
	// notifications.
	nbuf   bytes.Buffer
	nenc   *json.Encoder
	closed bool
	closer func() error
}

func newLineStream(r io.Reader, w io.Writer, log *slog.Logger, lim Limits) *lineStream {
	s := &lineStream{r: bufio.NewReaderSize(r, 64<<10), w: w, log: log, lim: lim.withDefaults()}
	s.aside.init(2 * s.lim.MaxMessageBytes)
	s.room = sync.NewCond(&s.qmu)
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	s.nenc = json.NewEncoder(&s.nbuf)
	return s
}

// ReadObject reads the next valid JSON-RPC message into v. Invalid and
// oversized lines are answered and skipped. At the end of input it calls
// onEOF and returns io.EOF.
func (s *lineStream) ReadObject(v any) error {
	for {
		s.waitRoom()
		line, over, err := s.readLine()
		if over != nil {
			if s.refuse(over, v) {
				return nil
			}
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			if s.accept(line) {
				uerr := json.Unmarshal(s.setAside(line), v)
				if cap(s.line) > maxKeptBuffer {
					// v holds its own copy: let a big line's buffer go
					// now rather than at the next read.
					s.line = nil
				}
				if uerr == nil {
					return nil
				} else {
					s.log.Warn("acp: message rejected", "err", uerr)
					s.replyError(CodeInvalidRequest, "Invalid request: "+uerr.Error())
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if s.onEOF != nil {
					s.onEOF()
				}
				return io.EOF
			}
			return err
		}
	}
}

// waitRoom waits while more than MaxQueuedWrites writes wait for the
// output (the client is not reading what we write); it returns at once
// once the stream is closed.
func (s *lineStream) waitRoom() {
	s.qmu.Lock()
	for s.queued > s.lim.MaxQueuedWrites && !s.stopped {
		s.room.Wait()
	}
	s.qmu.Unlock()
}

// enter and leave count a writer waiting for (or inside) a write: every
// message we send is counted from when it is ready until it is written
// (Conn counts its replies, notifications and calls; the stream its own
// error answers), however the JSON-RPC library serialises the writes.
func (s *lineStream) enter() {
	s.qmu.Lock()
	s.queued++
	s.qmu.Unlock()
}

func (s *lineStream) leave() {
	s.qmu.Lock()
	s.queued--
	if s.queued <= s.lim.MaxQueuedWrites {
		s.room.Broadcast()
	}
	s.qmu.Unlock()
}

// WriteObject encodes obj as one line and writes it in one call.
func (s *lineStream) WriteObject(obj any) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	s.buf.Reset()
	if err := s.enc.Encode(obj); err != nil {
		return err
	}
	_, err := s.w.Write(s.buf.Bytes())
	if s.buf.Cap() > maxKeptBuffer {
		// Do not keep a huge buffer alive after one big message (enc
		// keeps writing to s.buf).
		s.buf = bytes.Buffer{}
	}
	return err
}

// maxKeptBuffer is the largest write buffer kept for the next message, in
// bytes: a bigger one, left by one big message, is dropped.
const maxKeptBuffer = 1 << 20

// writeNotification writes the notification {jsonrpc, method, params}
// as one line in one Write call, under the same lock as WriteObject. The
// params are n when it is non-nil, encoded straight into the line (see
// SessionNotification.encode), else params, encoded as json.Marshal
// encodes them (HTML escaping). It returns the encoding error (nothing is
// written then) or the write error.
func (s *lineStream) writeNotification(method string, n *SessionNotification, params any) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	b := &s.nbuf
	b.Reset()
	b.WriteString(`{"jsonrpc":"2.0","method":`)
	err := encodeString(b, s.nenc, method)
	b.WriteString(`,"params":`)
	if err == nil {
		if n != nil {
			err = n.encode(b, s.nenc)
		} else {
			err = encodeValue(b, s.nenc, params)
		}
	}
	if err == nil {
		b.WriteString("}\n")
		_, err = s.w.Write(b.Bytes())
	} else {
		err = fmt.Errorf("acp: encoding %s: %w", method, err)
	}
	if b.Cap() > maxKeptBuffer {
		// Do not keep a huge buffer alive after one big message.
		*b = bytes.Buffer{}
	}
	return err
}

// Close stops writing (and wakes a read waiting for room); the
// underlying files belong to the caller.
func (s *lineStream) Close() error {
	s.qmu.Lock()
	s.stopped = true
	s.room.Broadcast()
	s.qmu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.closed = true
	if s.closer != nil {
		return s.closer()
	}
	return nil
}

var errStreamClosed = errors.New("acp: connection closed")
