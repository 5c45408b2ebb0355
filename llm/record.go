package llm

import (
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
// Failures to write are logged once and never fail the request.
type recording struct {
	log     *slog.Logger
	reqPath string
	ssePath string
	file    *os.File // the open NNN.sse, nil before open or after close
	opened  bool     // NNN.sse was created at least once
	failed  bool     // a write failed (already logged)
}

// startRecording numbers the request and writes its body (the exact bytes
// sent; headers are never recorded).
func startRecording(dir string, body []byte, log *slog.Logger) *recording {
	n := nextRecordNumber(dir)
	r := &recording{
		log:     log,
		reqPath: filepath.Join(dir, fmt.Sprintf("%03d.request.json", n)),
		ssePath: filepath.Join(dir, fmt.Sprintf("%03d.sse", n)),
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.fail(err)
		return r
	}
	if err := os.WriteFile(r.reqPath, body, 0o600); err != nil {
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

func (r *recording) closeFile() {
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
	if w.r.file != nil {
		if _, err := w.r.file.Write(p); err != nil {
			w.r.fail(err)
			_ = w.r.file.Close()
			w.r.file = nil
		}
	}
	return len(p), nil
}
