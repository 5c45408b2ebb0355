package toolfs

import (
	"fmt"

	"github.com/dsh-acp/dsh-acp/tools"
)

// ErrorName is the name of every error this package returns with a code.
const ErrorName = "FsError"

// The error codes. The first eight are the reference's closed union;
// CodeIO is this port's addition for failures of the disk or the editor
// that are none of those (a full disk, a permission error, an editor that
// answers an fs request with an error).
const (
	CodeNotFound       = "FS_NOT_FOUND"
	CodeNotText        = "FS_NOT_TEXT"
	CodeNotRegularFile = "FS_NOT_REGULAR_FILE"
	CodeStaleVersion   = "FS_STALE_VERSION"
	CodeNotObserved    = "FS_NOT_OBSERVED"
	CodeAmbiguousEdit  = "FS_AMBIGUOUS_EDIT"
	CodeEditNotFound   = "FS_EDIT_NOT_FOUND"
	CodeAborted        = "FS_ABORTED"
	CodeIO             = "FS_IO_ERROR"
)

// fsErr returns a *tools.Error named FsError with code and the formatted
// message (the model sees "Error: <message>").
func fsErr(code, format string, args ...any) *tools.Error {
	return &tools.Error{Name: ErrorName, Code: code, Message: fmt.Sprintf(format, args...)}
}

// ioErr wraps an unexpected I/O failure of op ("read", "write", "edit") on
// path: code FS_IO_ERROR, message `cannot <op> "<path>": <err>`.
func ioErr(op, path string, err error) *tools.Error {
	return &tools.Error{Name: ErrorName, Code: CodeIO, Message: fmt.Sprintf("cannot %s %q: %v", op, path, err), Err: err}
}

// aborted returns the FS_ABORTED error `<op> aborted`, wrapping cause.
func aborted(op string, cause error) *tools.Error {
	return &tools.Error{Name: ErrorName, Code: CodeAborted, Message: op + " aborted", Err: cause}
}

// argErr is a violated argument rule (offset, limit, blank path, ...): the
// reference's texts, with {ToolArgsError, INVALID_ARGS} for the log.
func argErr(msg string) *tools.Error {
	return &tools.Error{Name: tools.NameToolArgs, Code: tools.CodeInvalidArgs, Message: msg}
}
