package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// readSize is the buffer ParseStream reads into, in bytes.
const readSize = 32 << 10

// rawKeep bounds the bytes, in bytes, ParseStream keeps from the start of a
// body that has produced no event yet, to explain a body that is not a stream.
const rawKeep = 64 << 10

var (
	errDone      = errors.New("[DONE]")
	errNotObject = errors.New("payload is not a JSON object")
)

// ParseStream reads a chat-completions event stream from r until "data:
// [DONE]" and returns the assembled Response. onDelta (may be nil) is called
// for every non-empty reasoning piece, text piece, first sight of a tool call
// and tool-argument piece as soon as the event carrying it is complete; it is
// never called after ParseStream returns. Bytes after [DONE] are not read.
//
// Errors (always *Error): STREAM_CLOSED when r ends (or fails; Err holds the
// read error) before [DONE]; MALFORMED_RESPONSE when an event payload is not
// a JSON object of the chunk shape, or when a line or an event's data is over
// 16 MiB; STREAM_ERROR when the stream carries an {"error": {...}} object, or
// the whole body is such an object. On error the Response is non-nil and
// holds what was assembled before the failure.
func ParseStream(r io.Reader, onDelta func(Delta)) (*Response, error) {
	return parseStream(r, onDelta, maxEventSize)
}

// parseStream is ParseStream with the bound, in bytes, on one line and one
// event's data (MALFORMED_RESPONSE beyond it).
func parseStream(r io.Reader, onDelta func(Delta), limit int) (*Response, error) {
	p := parser{asm: assembler{onDelta: onDelta}, sse: sseFramer{limit: limit}}
	buf := make([]byte, readSize)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if ferr := p.feed(buf[:n]); ferr != nil {
				switch ferr {
				case errDone:
					return p.asm.response(), nil
				case errEventTooLarge:
					ferr = &Error{Code: CodeMalformed, Err: ferr,
						Message: fmt.Sprintf("the model sent an event larger than %d bytes", limit)}
				}
				return p.asm.response(), ferr
			}
		}
		if err == io.EOF {
			return p.asm.response(), p.finish()
		}
		if err != nil {
			return p.asm.response(), &Error{Code: CodeStreamClosed,
				Message: "the model stream broke off before it was complete: " + err.Error(), Err: err}
		}
	}
}

// parser couples the SSE framer with chunk decoding and assembly.
type parser struct {
	sse    sseFramer
	asm    assembler
	chunk  wireChunk
	events int    // events decoded so far
	raw    []byte // start of the body while no event has arrived (at most rawKeep bytes)
}

func (p *parser) feed(b []byte) error {
	if p.events == 0 && len(p.raw) < rawKeep {
		p.raw = append(p.raw, b[:min(len(b), rawKeep-len(p.raw))]...)
	}
	return p.sse.feed(b, p.event)
}

// event handles the data of one complete event.
func (p *parser) event(data []byte) error {
	p.events++
	p.raw = nil
	if isDone(data) {
		return errDone
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil // an empty data event carries nothing
	}
	if err := decodeChunk(data, &p.chunk); err != nil {
		return &Error{Code: CodeMalformed,
			Message: fmt.Sprintf("the model sent an unreadable event (%v): %s", err, excerpt(data)), Err: err}
	}
	if e := p.chunk.Error; e != nil {
		return streamError(e)
	}
	p.asm.add(&p.chunk)
	return nil
}

// finish decides how a body that ended without a complete [DONE] event ends.
func (p *parser) finish() error {
	if data, ok := p.sse.pending(); ok && isDone(data) {
		return nil // "data: [DONE]" without the closing blank line
	}
	if p.events == 0 && len(bytes.TrimSpace(p.raw)) > 0 && !looksLikeSSE(p.raw) {
		var b struct {
			Error *wireError `json:"error"`
		}
		if json.Unmarshal(p.raw, &b) == nil && b.Error != nil {
			return streamError(b.Error)
		}
		return &Error{Code: CodeStreamClosed,
			Message: "the model endpoint answered with something that is not an event stream: " + excerpt(p.raw)}
	}
	return &Error{Code: CodeStreamClosed,
		Message: "the model stream ended before it was complete (no [DONE]); the answer is cut off"}
}

// looksLikeSSE reports whether the first non-blank line of b is an SSE
// comment or field line.
func looksLikeSSE(b []byte) bool {
	b = bytes.TrimLeft(b, "\r\n")
	line, _, _ := bytes.Cut(b, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) > 0 && line[0] == ':' {
		return true
	}
	name, _, _ := bytes.Cut(line, []byte(":"))
	switch string(name) {
	case "data", "event", "id", "retry":
		return true
	}
	return false
}

func isDone(data []byte) bool {
	return string(bytes.TrimSpace(data)) == "[DONE]"
}

func streamError(e *wireError) *Error {
	msg := e.Message
	if msg == "" {
		msg = "the model endpoint reported an error in the stream"
	}
	return &Error{Code: CodeStreamError, Message: msg}
}

// excerpt returns about the first 200 bytes of b as valid UTF-8 text (bad
// bytes become U+FFFD), marked with "..." when cut.
func excerpt(b []byte) string {
	const limit = 200
	cut := len(b) > limit
	if cut {
		b = b[:limit]
	}
	s := string(bytes.ToValidUTF8(bytes.TrimSpace(b), []byte("\uFFFD")))
	if cut {
		s += "..."
	}
	return s
}
