package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// idleServer serves each attempt with the handler for its number (1-based).
func idleServer(t *testing.T, handlers ...func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		handlers[min(i, len(handlers)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// silent never answers: it waits until the client gives up.
func silent(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body) // then the server sees the client go
	<-r.Context().Done()
}

// partial sends the head of a stream, then nothing.
func partial(head string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, head)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

func whole(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, okStream)
}

// TestIdleTimeoutNoHeaders: an endpoint that never answers ends each
// attempt after the idle timeout, retried like a dropped connection, and
// the request fails with IDLE_TIMEOUT.
func TestIdleTimeoutNoHeaders(t *testing.T) {
	const idle = 200 * time.Millisecond
	srv, attempts := idleServer(t, silent)
	nw := &noWait{}
	h := HTTP{BaseURL: srv.URL, APIKey: testKey, IdleTimeout: idle, MaxAttempts: 2, Backoff: nw.backoff}
	start := time.Now()
	_, err := h.Stream(context.Background(), testReq, nil)
	took := time.Since(start)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeIdleTimeout || !strings.Contains(e.Message, "sent nothing for 0.2 s") {
		t.Fatalf("err = %v, want IDLE_TIMEOUT naming 0.2 s", err)
	}
	if attempts.Load() != 2 {
		t.Errorf("%d attempts, want 2 (retried)", attempts.Load())
	}
	t.Logf("idle timeout %v: two silent attempts given up after %v (%v per attempt)", idle, took, took/2)
	if took < 2*idle || took > 2*idle+5*time.Second {
		t.Errorf("took %v for two attempts of a %v idle timeout", took, idle)
	}
}

// TestIdleTimeoutBeforeAnyDelta: a stream that stalls before its first
// delta (here after a keep-alive comment) is retried, and the retry's
// answer is returned whole.
func TestIdleTimeoutBeforeAnyDelta(t *testing.T) {
	srv, attempts := idleServer(t, partial(": keep-alive\n\n"), whole)
	// 1 s: on a loaded machine the local server's answer must not be
	// taken for a stall.
	h := HTTP{BaseURL: srv.URL, APIKey: testKey, IdleTimeout: time.Second, Backoff: (&noWait{}).backoff}
	var text strings.Builder
	res, err := h.Stream(context.Background(), testReq, func(d Delta) { text.WriteString(d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello" || text.String() != "hmmhello" || attempts.Load() != 2 {
		t.Errorf("text %q, streamed %q, %d attempts; want the reasoning and the text once, after 2 attempts", res.Text, text.String(), attempts.Load())
	}
}

// TestIdleTimeoutAfterDelta: a stream that stalls after text reached the
// editor cannot be retried (the text cannot be taken back): IDLE_TIMEOUT
// with what was assembled.
func TestIdleTimeoutAfterDelta(t *testing.T) {
	head := `data: {"choices":[{"index":0,"delta":{"content":"hel"}}]}` + "\n\n"
	srv, attempts := idleServer(t, partial(head), whole)
	// 1 s: on a loaded machine the local server's answer must not be
	// taken for a stall.
	h := HTTP{BaseURL: srv.URL, APIKey: testKey, IdleTimeout: time.Second, Backoff: (&noWait{}).backoff}
	res, err := h.Stream(context.Background(), testReq, nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeIdleTimeout {
		t.Fatalf("err = %v, want IDLE_TIMEOUT", err)
	}
	if res == nil || res.Text != "hel" || attempts.Load() != 1 {
		t.Errorf("res %+v, %d attempts; want the assembled text and no retry", res, attempts.Load())
	}
}

// TestIdleTimeoutKeepAlive: bytes that keep arriving, keep-alive comments
// included, keep a slow stream going past the timeout.
func TestIdleTimeoutKeepAlive(t *testing.T) {
	srv, _ := idleServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		// 1.5 s of keep-alives 0.1 s apart against a 1 s timeout: a loaded
		// machine may stretch a gap, not tenfold.
		for range 15 {
			io.WriteString(w, ": keep-alive\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
		io.WriteString(w, okStream)
	})
	h := HTTP{BaseURL: srv.URL, APIKey: testKey, IdleTimeout: time.Second}
	res, err := h.Stream(context.Background(), testReq, nil)
	if err != nil || res.Text != "hello" {
		t.Fatalf("res %+v, err %v", res, err)
	}
}

// TestCancelDuringIdleWait: a cancel ends the request at once, long
// before the idle timeout.
func TestCancelDuringIdleWait(t *testing.T) {
	srv, _ := idleServer(t, silent)
	h := HTTP{BaseURL: srv.URL, APIKey: testKey, IdleTimeout: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := h.Stream(ctx, testReq, nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeCancelled {
		t.Fatalf("err = %v, want CANCELLED", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("cancel took %v", took)
	}
}
