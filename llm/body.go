package llm

import (
	"context"
	"errors"
	"io"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ctxReader fails reads with ctx's error once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// cancelled is the error for a request whose context ended.
func cancelled(ctx context.Context) *Error {
	msg := "the model request was cancelled"
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		msg = "the model request timed out"
	}
	return &Error{Code: CodeCancelled, Message: msg, Err: ctx.Err()}
}

// parseBody runs ParseStream over a response body and maps its failures the
// way every client reports them: a ctx that ended while the body was read
// wins over anything else (even a stream that completed within the same
// read), and a body that ended before its first byte is EMPTY_RESPONSE.
func parseBody(ctx context.Context, body io.Reader, onDelta func(Delta)) (*Response, error) {
	cr := &countingReader{r: body}
	res, err := ParseStream(cr, onDelta)
	if ctx.Err() != nil {
		return res, cancelled(ctx)
	}
	if err == nil {
		return res, nil
	}
	var e *Error
	if errors.As(err, &e) && e.Code == CodeStreamClosed && e.Err == nil && cr.n == 0 {
		return nil, &Error{Code: CodeEmptyResponse, Message: "the model endpoint answered with an empty body"}
	}
	return res, err
}
