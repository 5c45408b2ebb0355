package llm

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
)

// requestBody is one chat-completions request's body, for each attempt
// of it. With data set (a recording keeps the body sent) it is those
// bytes. Otherwise the body is encoded anew for each attempt, a message
// at a time, into a pipe that the transport reads as it sends (chunked,
// or DATA frames over HTTP/2): a long history is then never held a
// second time as one encoded buffer, and each attempt sends the same
// bytes MarshalRequest returns (writeRequest of the same messages).
type requestBody struct {
	req        Request
	head, tail []byte // requestEnvelope's
	data       []byte
}

// request is the POST of b to url under ctx, with the headers left to the
// caller. Its GetBody encodes the body again, so the transport may
// resend it on a fresh connection.
func (b requestBody) request(ctx context.Context, url string) (*http.Request, error) {
	if b.data != nil {
		return http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b.data))
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, b.open())
	if err != nil {
		return nil, err
	}
	hreq.GetBody = func() (io.ReadCloser, error) { return b.open(), nil }
	return hreq, nil
}

// open starts the goroutine that encodes the body into a pipe and
// returns the pipe's reader. The goroutine ends when the body is written
// or when the reader is closed (the transport closes a request's body
// on every outcome): its writes then fail. An encoding error reaches the
// reader as its error, so the request fails with it.
func (b requestBody) open() io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 64<<10)
		err := writeRequest(w, b.head, b.tail, b.req.Messages)
		if err == nil {
			err = w.Flush()
		}
		pw.CloseWithError(err)
	}()
	return pr
}
