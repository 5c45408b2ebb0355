package acp

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
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

// setAside returns line, or, for a line over maxKeptBuffer whose
// top-level "params" or "result" is most of it, a copy with that value
// replaced by a placeholder (a string naming it in s.aside): the JSON-RPC
// library decodes params generically and encodes them again, which costs
// several copies of a big message; the Conn takes the value back with
// resolve. The value itself is not copied: it stays in line, whose buffer
// is never reused once this big.
func (s *lineStream) setAside(line []byte) []byte {
	if len(line) <= maxKeptBuffer {
		return line
	}
	var m msgScan
	m.feed(line)
	if m.bodyEnd == 0 || m.bodyEnd-m.bodyStart < int64(len(line))/2 {
		return line
	}
	ph := s.aside.put(json.RawMessage(line[m.bodyStart:m.bodyEnd]))
	out := make([]byte, 0, int64(len(line))-(m.bodyEnd-m.bodyStart)+int64(len(ph)))
	out = append(out, line[:m.bodyStart]...)
	out = append(out, ph...)
	return append(out, line[m.bodyEnd:]...)
}

// resolve returns the value a placeholder of setAside stands for (and
// forgets it), or raw itself when it is none.
func (s *lineStream) resolve(raw json.RawMessage) json.RawMessage {
	return s.aside.take(raw)
}

// aside holds values set aside by setAside until the Conn takes them;
// at most limit bytes, the oldest forgotten first (a response nobody
// waits for any more is never taken).
type aside struct {
	mu     sync.Mutex
	prefix string // `"dsh-acp-aside:<random>:`, so a client cannot forge one
	next   int
	vals   map[string]json.RawMessage
	order  []string
	bytes  int64
	limit  int64
}

func (a *aside) init(limit int64) {
	var r [12]byte
	_, _ = rand.Read(r[:])
	a.prefix = `"dsh-acp-aside:` + hex.EncodeToString(r[:]) + ":"
	a.vals, a.limit = map[string]json.RawMessage{}, limit
}

// put keeps v and returns its placeholder (a JSON string).
func (a *aside) put(v json.RawMessage) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	key := a.prefix + strconv.Itoa(a.next) + `"`
	a.vals[key] = v
	a.order = append(a.order, key)
	a.bytes += int64(len(v))
	for a.bytes > a.limit && len(a.order) > 1 {
		old := a.order[0]
		a.order = a.order[1:]
		a.bytes -= int64(len(a.vals[old]))
		delete(a.vals, old)
	}
	return []byte(key)
}

// take returns the value of placeholder raw and forgets it; raw itself
// when it is not a placeholder (or one already forgotten: then the
// placeholder string stays, and decoding it fails visibly).
func (a *aside) take(raw json.RawMessage) json.RawMessage {
	if len(raw) < len(a.prefix) || string(raw[:len(a.prefix)]) != a.prefix {
		return raw
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.vals[string(raw)]
	if !ok {
		return raw
	}
	delete(a.vals, string(raw))
	a.bytes -= int64(len(v))
	a.order = slices.DeleteFunc(a.order, func(k string) bool { return k == string(raw) })
	return v
}

// oversized is what is known of a line longer than MaxMessageBytes.
type oversized struct {
	size int64 // its length in bytes, newline excluded
	scan msgScan
}

// readLine reads one line, without its newline. A line longer than
// MaxMessageBytes is read through in buffer-sized pieces, never held:
// only its size and top-level "id" are kept (over is then non-nil and
// line nil). err is the read error that ended the line (io.EOF for a last
// line without newline).
func (s *lineStream) readLine() (line []byte, over *oversized, err error) {
	if cap(s.line) > maxKeptBuffer {
		s.line = nil // do not keep a big line's buffer alive
	}
	s.line = s.line[:0]
	var size int64
	for {
		chunk, rerr := s.r.ReadSlice('\n')
		body := chunk
		if rerr == nil {
			body = chunk[:len(chunk)-1]
		}
		size += int64(len(body))
		switch {
		case over != nil:
			over.scan.feed(body)
		case size > s.lim.MaxMessageBytes:
			over = &oversized{}
			over.scan.feed(s.line)
			over.scan.feed(body)
			s.line = nil
		default:
			if need := len(s.line) + len(body); need > cap(s.line) {
				// Double (append grows big slices by 1.25x, which
				// allocates several times a long line in all).
				grown := make([]byte, len(s.line), max(need, 2*cap(s.line), 4096))
				copy(grown, s.line)
				s.line = grown
			}
			s.line = append(s.line, body...)
		}
		if errors.Is(rerr, bufio.ErrBufferFull) {
			continue
		}
		if over != nil {
			over.size = size
			return nil, over, rerr
		}
		return s.line, nil, rerr
	}
}

// refuse answers an oversized line: a request gets -32600 with its id, a
// notification is logged and dropped, a response to one of our calls is
// turned into an error response decoded into v (so that call fails; it
// reports true), anything else gets -32600 with id null.
func (s *lineStream) refuse(o *oversized, v any) bool {
	msg := fmt.Sprintf("the message is %d bytes, more than the limit of %d bytes (--max-message-size); it was not read", o.size, s.lim.MaxMessageBytes)
	sc := &o.scan
	s.log.Warn("acp: message too large", "bytes", o.size, "limit", s.lim.MaxMessageBytes, "id", string(sc.id), "method", sc.method)
	id := sc.id
	if !validID(id) {
		id = nil
	}
	switch {
	case sc.method && id == nil && sc.idSeen:
		s.replyError(CodeInvalidRequest, "Invalid request: "+msg)
	case sc.method && id == nil:
		// A notification: there is no one to answer.
	case sc.method:
		s.reply(id, CodeInvalidRequest, "Invalid request: "+msg)
	case (sc.result || sc.errorKey) && id != nil:
		resp := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, CodeInvalidRequest, "the editor's answer was not accepted: "+msg)
		if json.Unmarshal([]byte(resp), v) == nil {
			return true
		}
	default:
		s.replyError(CodeInvalidRequest, "Invalid request: "+msg)
	}
	return false
}

// reply writes a JSON-RPC error response with the raw id.
func (s *lineStream) reply(id json.RawMessage, code int, msg string) {
	s.enter()
	defer s.leave()
	if err := s.WriteObject(errorReply{JSONRPC: "2.0", ID: id, Error: Error{Code: code, Message: msg}}); err != nil {
		s.log.Warn("acp: could not answer an oversized message", "err", err)
	}
}

// errorReply is a JSON-RPC error response with a raw id.
type errorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   Error           `json:"error"`
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

// msgScan finds, in the bytes of a JSON object fed piece by piece, which
// top-level members it has ("method", "result", "error") and the raw
// value of "id" (at most maxIDBytes), keeping nothing else: a
// streaming scan of strings, escapes and nesting.
type msgScan struct {
	state int // see the scan* constants
	depth int // nesting inside the current value
	inStr bool
	esc   bool
	key   []byte
	keyOK bool // key is short enough to be one we look for
	isID  bool // the value being read is "id"'s
	val   []byte
	valOK bool

	id                       json.RawMessage
	idSeen                   bool
	method, result, errorKey bool

	// pos counts the bytes fed, at is the index of the byte being
	// scanned; [bodyStart, bodyEnd) is the value of the top-level
	// "params" or "result" when it is a string, object or array
	// (bodyEnd 0 until it has ended).
	pos, at            int64
	isBody             bool
	bodyStart, bodyEnd int64
}

// maxIDBytes bounds the raw id kept.
const maxIDBytes = 128

const (
	scanStart   = iota // before '{'
	scanKey            // before a key (or '}')
	scanInKey          // inside a key string
	scanColon          // after a key
	scanValue          // before a value
	scanInValue        // inside a value
	scanComma          // after a value
	scanDone           // the object ended, or it is not one
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (m *msgScan) feed(b []byte) {
	base := m.pos
	m.pos += int64(len(b))
	for i, c := range b {
		m.at = base + int64(i)
		switch m.state {
		case scanStart:
			if isSpace(c) {
				continue
			}
			m.state = scanDone
			if c == '{' {
				m.state = scanKey
			}
		case scanKey:
			if isSpace(c) {
				continue
			}
			m.state = scanDone
			if c == '"' {
				m.state, m.key, m.keyOK, m.esc = scanInKey, m.key[:0], true, false
			}
		case scanInKey:
			switch {
			case m.esc:
				m.esc = false
			case c == '\\':
				m.esc, m.keyOK = true, false // no key we look for has escapes
			case c == '"':
				m.state = scanColon
				continue
			}
			if m.keyOK && len(m.key) < 8 {
				m.key = append(m.key, c)
			} else {
				m.keyOK = false
			}
		case scanColon:
			if isSpace(c) {
				continue
			}
			m.state = scanDone
			if c == ':' {
				m.state = scanValue
				k := ""
				if m.keyOK {
					k = string(m.key)
				}
				m.isID = k == "id"
				m.isBody = k == "params" || k == "result"
				m.idSeen = m.idSeen || m.isID
				m.method = m.method || k == "method"
				m.result = m.result || k == "result"
				m.errorKey = m.errorKey || k == "error"
				m.val, m.valOK = m.val[:0], true
			}
		case scanValue:
			if isSpace(c) {
				continue
			}
			m.state, m.depth, m.inStr, m.esc = scanInValue, 0, false, false
			if m.isBody {
				m.bodyStart = m.at
			}
			switch c {
			case '"':
				m.inStr = true
			case '{', '[':
				m.depth = 1
			}
			m.add(c)
		case scanInValue:
			if m.inStr {
				m.add(c)
				switch {
				case m.esc:
					m.esc = false
				case c == '\\':
					m.esc = true
				case c == '"':
					m.inStr = false
					if m.depth == 0 {
						m.endBody()
						m.end()
						m.state = scanComma
					}
				}
				continue
			}
			if m.depth > 0 {
				m.add(c)
				switch c {
				case '"':
					m.inStr = true
				case '{', '[':
					m.depth++
				case '}', ']':
					if m.depth--; m.depth == 0 {
						m.endBody()
						m.end()
						m.state = scanComma
					}
				}
				continue
			}
			// A number, true, false or null.
			switch {
			case c == ',':
				m.end()
				m.state = scanKey
			case c == '}':
				m.end()
				m.state = scanDone
			case isSpace(c):
				m.end()
				m.state = scanComma
			default:
				m.add(c)
			}
		case scanComma:
			if isSpace(c) {
				continue
			}
			m.state = scanDone
			if c == ',' {
				m.state = scanKey
			}
		case scanDone:
			return
		}
	}
}

// add keeps c of "id"'s value, up to maxIDBytes.
func (m *msgScan) add(c byte) {
	if !m.isID || !m.valOK {
		return
	}
	if len(m.val) >= maxIDBytes {
		m.valOK = false
		return
	}
	m.val = append(m.val, c)
}

// endBody records the end of "params"' or "result"'s value, which ends
// with the current byte.
func (m *msgScan) endBody() {
	if m.isBody {
		m.bodyEnd = m.at + 1
		m.isBody = false
	}
}

// end closes a value: "id"'s is kept when it fit.
func (m *msgScan) end() {
	if m.isID && m.valOK {
		m.id = append(json.RawMessage(nil), m.val...)
	}
	m.isID = false
}

// accept checks that line is one JSON-RPC message the library can decode;
// otherwise it answers the error itself (never for response-shaped
// messages, which are only logged) and reports false.
func (s *lineStream) accept(line []byte) bool {
	switch line[0] {
	case '{':
	case '[':
		if json.Valid(line) {
			s.replyError(CodeInvalidRequest, "Invalid request: batches are not supported")
		} else {
			s.replyError(CodeParseError, "Parse error: the line is not valid JSON")
		}
		return false
	default:
		if json.Valid(line) {
			s.replyError(CodeInvalidRequest, "Invalid request: a message must be a JSON object")
		} else {
			s.replyError(CodeParseError, "Parse error: the line is not valid JSON")
		}
		return false
	}
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			s.replyError(CodeParseError, "Parse error: the line is not valid JSON")
		} else {
			s.replyError(CodeInvalidRequest, "Invalid request: "+err.Error())
		}
		return false
	}
	if probe.Method == nil {
		if probe.Result == nil && probe.Error == nil {
			s.replyError(CodeInvalidRequest, "Invalid request: neither a request, a notification nor a response")
			return false
		}
		if !validID(probe.ID) {
			// A response we cannot match (e.g. the editor's answer to a
			// line it could not parse): never answer a response.
			s.log.Debug("acp: dropping a response with an unusable id", "id", string(probe.ID))
			return false
		}
		return true
	}
	if probe.Method[0] != '"' {
		s.replyError(CodeInvalidRequest, "Invalid request: method must be a string")
		return false
	}
	if probe.ID != nil && !validID(probe.ID) {
		s.replyError(CodeInvalidRequest, "Invalid request: id must be a string or a non-negative integer")
		return false
	}
	return true
}

// validID reports whether raw is a JSON string or a non-negative integer
// that fits in an int64 (what the JSON-RPC library can echo exactly).
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		return true
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && raw[0] != '-'
}

// errorLine is a JSON-RPC error response with id null.
type errorLine struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *int   `json:"id"`
	Error   Error  `json:"error"`
}

func (s *lineStream) replyError(code int, msg string) {
	s.enter()
	defer s.leave()
	s.log.Warn("acp: bad input line", "code", code, "message", msg)
	if err := s.WriteObject(errorLine{JSONRPC: "2.0", Error: Error{Code: code, Message: msg}}); err != nil {
		s.log.Warn("acp: could not answer a bad line", "err", err)
	}
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
