// This file reads lines longer than Limits.MaxMessageBytes without
// holding them, and answers them.

package acp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
)

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
