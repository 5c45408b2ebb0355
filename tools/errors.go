package tools

import (
	"errors"
	"strings"
)

// Error codes and names produced by this package.
const (
	// CodeUnknownTool is the code of the error for a call to a tool that is
	// not registered.
	CodeUnknownTool = "UNKNOWN_TOOL"
	// CodeInvalidArgs is the code of ArgsError.
	CodeInvalidArgs = "INVALID_ARGS"
	// NameToolNotFound is the name of the unknown-tool error.
	NameToolNotFound = "ToolNotFoundError"
	// NameToolArgs is the name of ArgsError.
	NameToolArgs = "ToolArgsError"
)

// CodedError is an error that carries a name and a stable code, which the
// registry copies into Result.Error as {name, code}. Plain errors give a text
// only result.
type CodedError interface {
	error
	// ErrorName is the error's class name, e.g. "FsError".
	ErrorName() string
	// ErrorCode is the stable code, e.g. "FS_NOT_FOUND".
	ErrorCode() string
}

// Error is a general CodedError. Error() returns Message (or, when Message is
// empty, the wrapped Err's text); ErrorName returns Name, or "HarnessError"
// when Name is empty; Unwrap returns Err.
type Error struct {
	Name, Code, Message string
	Err                 error
}

// Error returns e.Message, falling back to e.Err's text when Message is empty.
func (e *Error) Error() string {
	if e.Message == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// ErrorName returns e.Name, or "HarnessError" when it is empty.
func (e *Error) ErrorName() string {
	if e.Name == "" {
		return "HarnessError"
	}
	return e.Name
}

// ErrorCode returns e.Code.
func (e *Error) ErrorCode() string { return e.Code }

// Unwrap returns the wrapped cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// UnknownToolError returns the error for a call to an unregistered tool:
// name "ToolNotFoundError", code "UNKNOWN_TOOL", message `unknown tool "<name>"`.
func UnknownToolError(name string) *Error {
	return &Error{Name: NameToolNotFound, Code: CodeUnknownTool, Message: `unknown tool "` + name + `"`}
}

// ArgsError reports arguments that do not match a tool's schema. Its message
// is "invalid arguments: " followed by Violations joined with "; "; its name
// is "ToolArgsError" and its code "INVALID_ARGS". Err, when set, is the
// underlying cause (for example a JSON syntax error).
type ArgsError struct {
	Violations []string
	Err        error
}

// Error returns "invalid arguments: v1; v2; …".
func (e *ArgsError) Error() string {
	return "invalid arguments: " + strings.Join(e.Violations, "; ")
}

// ErrorName returns "ToolArgsError".
func (e *ArgsError) ErrorName() string { return NameToolArgs }

// ErrorCode returns "INVALID_ARGS".
func (e *ArgsError) ErrorCode() string { return CodeInvalidArgs }

// Unwrap returns the underlying cause, if any.
func (e *ArgsError) Unwrap() error { return e.Err }

// errorInfo returns {name, code} of the first CodedError in err's chain, or
// nil when there is none.
func errorInfo(err error) *ErrorInfo {
	var ce CodedError
	if err == nil || !errors.As(err, &ce) {
		return nil
	}
	return &ErrorInfo{Name: ce.ErrorName(), Code: ce.ErrorCode()}
}
