package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
)

// lineStream is the newline-delimited object stream under the JSON-RPC
// connection (it implements jsonrpc2.ObjectStream). Reading: one message
// per line, of any length; blank lines and a trailing \r are skipped; a
// line that is not JSON is answered with -32700 and one that is not a
// JSON-RPC message with -32600 (both with id null), and reading goes on.
// Writing: each message is encoded once and written with a single Write
// call under one mutex, so messages never interleave and keep the order
// in which their writers were called.
type lineStream struct {
	r   *bufio.Reader
	log *slog.Logger

	// onEOF runs on the read goroutine when the input ends, before
	// ReadObject reports io.EOF; the connection uses it to drain.
	onEOF func()

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

func newLineStream(r io.Reader, w io.Writer, log *slog.Logger) *lineStream {
	s := &lineStream{r: bufio.NewReaderSize(r, 64<<10), w: w, log: log}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	s.nenc = json.NewEncoder(&s.nbuf)
	return s
}

// ReadObject reads the next valid JSON-RPC message into v. Invalid lines
// are answered and skipped. At the end of input it calls onEOF and
// returns io.EOF.
func (s *lineStream) ReadObject(v any) error {
	for {
		line, err := s.r.ReadBytes('\n')
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			if s.accept(line) {
				if uerr := json.Unmarshal(line, v); uerr == nil {
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

// Close stops writing; the underlying files belong to the caller.
func (s *lineStream) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.closed = true
	if s.closer != nil {
		return s.closer()
	}
	return nil
}

var errStreamClosed = errors.New("acp: connection closed")
