// This file checks each line is one JSON-RPC message before the
// library sees it, answering -32700 and -32600 itself.

package acp

import (
	"encoding/json"
	"errors"
	"strconv"
)

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
