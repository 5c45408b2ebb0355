package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Error codes carried in Error.Code.
const (
	CodeNoAPIKey        = "NO_API_KEY"         // no key configured; no request was made
	CodeAuth            = "AUTH"               // HTTP 401 or 403
	CodeRateLimit       = "RATE_LIMIT"         // HTTP 429 (after retries)
	CodeInvalidRequest  = "INVALID_REQUEST"    // HTTP 400
	CodeServer          = "SERVER"             // HTTP 500 and above (after retries)
	CodeConnection      = "CONNECTION"         // no response at all (after retries)
	CodeIdleTimeout     = "IDLE_TIMEOUT"       // the endpoint sent nothing for HTTP.IdleTimeout (after retries)
	CodeEmptyResponse   = "EMPTY_RESPONSE"     // 2xx with an empty body
	CodeStreamClosed    = "STREAM_CLOSED"      // the stream ended or broke before [DONE]
	CodeMalformed       = "MALFORMED_RESPONSE" // an event payload that is not a JSON chunk
	CodeStreamError     = "STREAM_ERROR"       // the endpoint sent an error object instead of chunks
	CodeCancelled       = "CANCELLED"          // the context ended; Unwrap gives ctx's error
	CodeReplayExhausted = "REPLAY_EXHAUSTED"   // Replay has no file for this request
	CodeReplayRead      = "REPLAY_READ"        // Replay could not open or read its file
	CodeConfig          = "CONFIG"             // a bad base URL or a request that cannot be encoded
)

// Error is every failure this package reports.
type Error struct {
	Code      string // one of the Code* constants, or "HTTP_<status>" for other statuses
	Status    int    // HTTP status when one was received, else 0
	Message   string // what went wrong, in words (the endpoint's own message when it gave one)
	Retryable bool   // the same request may succeed later (429, 5xx, connection failures)
	Err       error  // the underlying error, if any
}

// Error returns a sentence a user understands: Message, the HTTP status
// when known, and a hint about the key for NO_API_KEY and AUTH.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if msg == "" {
		msg = "model request failed (" + e.Code + ")"
	}
	if e.Status != 0 {
		tag := "HTTP " + strconv.Itoa(e.Status)
		if !strings.Contains(msg, tag) {
			msg += " (" + tag + ")"
		}
	}
	if e.Code == CodeAuth {
		msg += "; check the API key in DSH_API_KEY or DEEPSEEK_API_KEY"
	}
	return msg
}

// Unwrap returns the underlying error (nil if none).
func (e *Error) Unwrap() error { return e.Err }

// statusCode maps an HTTP status to an error code: AUTH, RATE_LIMIT,
// INVALID_REQUEST, SERVER, else HTTP_<status>.
func statusCode(status int) string {
	switch {
	case status == 401 || status == 403:
		return CodeAuth
	case status == 429:
		return CodeRateLimit
	case status == 400:
		return CodeInvalidRequest
	case status >= 500:
		return CodeServer
	}
	return "HTTP_" + strconv.Itoa(status)
}

// wireError is the error object OpenAI-compatible endpoints send, both as the
// body of a failed response and, with some servers, inside the stream.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// errorBodyMessage returns error.message from a JSON error body, or "".
func errorBodyMessage(body []byte) string {
	var b struct {
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(body, &b) != nil || b.Error == nil {
		return ""
	}
	return strings.TrimSpace(b.Error.Message)
}

// httpError builds the Error for a non-2xx response with the given body.
func httpError(status int, body []byte) *Error {
	msg := errorBodyMessage(body)
	if msg == "" {
		msg = fmt.Sprintf("model endpoint error (HTTP %d)", status)
	}
	return &Error{
		Code:      statusCode(status),
		Status:    status,
		Message:   msg,
		Retryable: status == 429 || status >= 500,
	}
}

// IsModelNotFound reports whether err is an endpoint's refusal of the
// model name itself: HTTP 400 or 404 whose message speaks of the model
// not existing or not being found (DeepSeek answers an unknown name with
// 400 "Model Not Exist"; OpenAI-compatible servers with 404 "The model
// `x` does not exist" or "model not found").
func IsModelNotFound(err error) bool {
	var le *Error
	if !errors.As(err, &le) || (le.Status != 400 && le.Status != 404) {
		return false
	}
	m := strings.ToLower(le.Message)
	if !strings.Contains(m, "model") {
		return false
	}
	for _, w := range []string{"not exist", "not found", "unknown model", "no such model", "invalid model"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}
