package acp

import (
	"errors"
	"fmt"
)

// JSON-RPC error codes used by ACP: the JSON-RPC 2.0 ones and ACP's
// auth_required (-32000) and resource-not-found (-32002).
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeRequestCancelled = -32800
	CodeAuthRequired     = -32000
	CodeResourceNotFound = -32002
)

// Error is a JSON-RPC error object (schema type Error). Handlers return it
// to choose the code; any other error is answered with -32603.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// Error returns the message with its code.
func (e *Error) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParams returns a -32602 error naming the field or the reason.
func InvalidParams(format string, args ...any) *Error {
	return Errorf(CodeInvalidParams, format, args...)
}

// asError converts any error to the *Error sent on the wire: an *Error
// found in the chain is used as is, anything else becomes -32603 with the
// error text.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: "Internal error: " + err.Error()}
}
