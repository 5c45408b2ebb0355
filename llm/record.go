package llm

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// recordCounters numbers the recorded requests of the process per directory
// (absolute path), starting at 1.
var recordCounters = struct {
	sync.Mutex
	next map[string]int
}{next: map[string]int{}}

func nextRecordNumber(dir string) int {
	key, err := filepath.Abs(dir)
	if err != nil {
		key = filepath.Clean(dir)
	}
	recordCounters.Lock()
	defer recordCounters.Unlock()
	recordCounters.next[key]++
	return recordCounters.next[key]
}

// recording writes one exchange to DIR/NNN.request.json and DIR/NNN.sse.
// Failures to write are logged once and never fail the request. The secret
// (the API key), should it occur in either body, is written as "[redacted]".
type recording struct {
	log     *slog.Logger
	secret  []byte // nil when too short to redact safely
	tail    []byte // bytes held back because they may start the secret
	reqPath string
	ssePath string
	file    *os.File // the open NNN.sse, nil before open or after close
	opened  bool     // NNN.sse was created at least once
	failed  bool     // a write failed (already logged)
}

// startRecording numbers the request and writes its body (the exact bytes
// sent; headers are never recorded).
func startRecording(dir string, body []byte, secret string, log *slog.Logger) *recording {
	n := nextRecordNumber(dir)
	r := &recording{
		log:     log,
		secret:  redactable(secret),
		reqPath: filepath.Join(dir, fmt.Sprintf("%03d.request.json", n)),
		ssePath: filepath.Join(dir, fmt.Sprintf("%03d.sse", n)),
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.fail(err)
		return r
	}
	if err := os.WriteFile(r.reqPath, r.redact(body), 0o600); err != nil {
		r.fail(err)
	}
	return r
}

func (r *recording) fail(err error) {
	if !r.failed {
		r.failed = true
		r.log.Warn("recording the model exchange failed", "err", err)
	}
}

// body (re)creates NNN.sse, empty, and returns a writer into it that never
// fails (so it can sit in an io.TeeReader). Each attempt of a retried
// request starts the file over: the last response is what gets recorded.
func (r *recording) body() io.Writer {
	r.closeFile()
	r.opened = true
	f, err := os.OpenFile(r.ssePath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		r.fail(err)
		return io.Discard
	}
	r.file = f
	return recordWriter{r}
}

// writeBody records b as the whole response body.
func (r *recording) writeBody(b []byte) {
	_, _ = r.body().Write(b)
	r.closeFile()
}

// redact replaces every occurrence of the secret in b.
func (r *recording) redact(b []byte) []byte {
	if r.secret == nil {
		return b
	}
	return bytes.ReplaceAll(b, r.secret, []byte(redacted))
}

// write redacts and writes p, holding back a tail that may be the start of
// the secret until more bytes (or the end) show it is not.
func (r *recording) write(p []byte) {
	if r.file == nil {
		return
	}
	buf := p
	if r.secret != nil {
		buf = r.redact(append(r.tail, p...))
		keep := min(len(buf), len(r.secret)-1)
		r.tail = append(r.tail[:0], buf[len(buf)-keep:]...)
		buf = buf[:len(buf)-keep]
	}
	if _, err := r.file.Write(buf); err != nil {
		r.fail(err)
		_ = r.file.Close()
		r.file = nil
	}
}

func (r *recording) closeFile() {
	if r.file != nil && len(r.tail) > 0 {
		tail := r.tail
		r.tail = nil
		if _, err := r.file.Write(tail); err != nil {
			r.fail(err)
		}
	}
	r.tail = nil
	if r.file != nil {
		if err := r.file.Close(); err != nil {
			r.fail(err)
		}
		r.file = nil
	}
}

// close ends the recording; a request that never got a response leaves an
// empty NNN.sse so later numbers still match the requests.
func (r *recording) close() {
	if !r.opened {
		r.body()
	}
	r.closeFile()
}

type recordWriter struct{ r *recording }

func (w recordWriter) Write(p []byte) (int, error) {
	w.r.write(p)
	return len(p), nil
}
