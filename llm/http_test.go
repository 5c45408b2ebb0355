package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testKey = "sk-test-SECRET-0123456789"

const okStream = `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""}}]}

data: {"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}

data: {"choices":[{"index":0,"delta":{"content":"hello"}}]}

data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}

data: [DONE]

`

var keyStream = `data: {"choices":[{"index":0,"delta":{"content":"key ` + testKey + `"}}]}

data: [DONE]

`

var testReq = Request{Model: "deepseek-chat", Messages: []Message{{Role: "user", Content: "hi"}}}

// noWait is a Backoff that records the attempts it was asked about.
type noWait struct {
	mu       sync.Mutex
	attempts []int
}

func (n *noWait) backoff(attempt int) time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.attempts = append(n.attempts, attempt)
	return time.Millisecond
}

func TestHTTPRequestShape(t *testing.T) {
	var gotPath string
	var gotHeader http.Header
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath = r.Method + " " + r.URL.Path
		gotHeader = r.Header.Clone()
		gotBody, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, okStream)
	}))
	defer srv.Close()

	var deltas []Delta
	h := HTTP{BaseURL: srv.URL + "/v1/", APIKey: testKey, UserAgent: "dsh-acp/1.2.3"}
	res, err := h.Stream(context.Background(), testReq, func(d Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	if gotPath != "POST /v1/chat/completions" {
		t.Errorf("request line %q", gotPath)
	}
	for k, want := range map[string]string{
		"Authorization": "Bearer " + testKey,
		"Content-Type":  "application/json",
		"Accept":        "text/event-stream",
		"User-Agent":    "dsh-acp/1.2.3",
	} {
		if got := gotHeader.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	want, _ := MarshalRequest(testReq)
	if !bytes.Equal(gotBody, want) {
		t.Errorf("body %s\nwant %s", gotBody, want)
	}
	if res.Text != "hello" || res.Reasoning != "hmm" || res.FinishReason != "stop" || res.Usage.TotalTokens != 5 {
		t.Errorf("response %+v", res)
	}
	if len(deltas) != 2 || deltas[0] != (Delta{Kind: DeltaReasoning, Text: "hmm"}) || deltas[1] != (Delta{Kind: DeltaText, Text: "hello"}) {
		t.Errorf("deltas %+v", deltas)
	}

	// Zero values: default user agent.
	h = HTTP{BaseURL: srv.URL, APIKey: testKey}
	if _, err := h.Stream(context.Background(), testReq, nil); err != nil {
		t.Fatal(err)
	}
	if got := gotHeader.Get("User-Agent"); !strings.HasPrefix(got, "dsh-acp/") || gotPath != "POST /chat/completions" {
		t.Errorf("defaults: %q %q", got, gotPath)
	}
}

func TestHTTPNoAPIKey(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, err := HTTP{BaseURL: srv.URL}.Stream(context.Background(), testReq, nil)
	if errCode(err) != CodeNoAPIKey || !strings.Contains(err.Error(), "DSH_API_KEY") || !strings.Contains(err.Error(), "DEEPSEEK_API_KEY") {
		t.Fatalf("err %v", err)
	}
	if hits.Load() != 0 {
		t.Fatal("a request was made without a key")
	}
}

func TestHTTPErrorStatuses(t *testing.T) {
	tests := []struct {
		status   int
		body     string
		code     string
		msg      string
		attempts int32
	}{
		{400, `{"error":{"message":"Invalid messages","type":"invalid_request_error"}}`, CodeInvalidRequest, "Invalid messages (HTTP 400)", 1},
		{401, `{"error":{"message":"Authentication Fails, Your api key: ****6789 is invalid","type":"authentication_error","param":null,"code":"invalid_request_error"}}`, CodeAuth, "Authentication Fails, Your api key: ****6789 is invalid (HTTP 401); check the API key in DSH_API_KEY or DEEPSEEK_API_KEY", 1},
		{402, `{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}`, "HTTP_402", "Insufficient Balance (HTTP 402)", 1},
		{429, `{"error":{"message":"Rate limit reached"}}`, CodeRateLimit, "Rate limit reached (HTTP 429)", 3},
		{500, `Internal Server Error`, CodeServer, "model endpoint error (HTTP 500)", 3},
	}
	for _, tt := range tests {
		var hits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.WriteHeader(tt.status)
			io.WriteString(w, tt.body)
		}))
		nw := &noWait{}
		res, err := HTTP{BaseURL: srv.URL, APIKey: testKey, Backoff: nw.backoff}.Stream(context.Background(), testReq, nil)
		srv.Close()
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%d: err %v is not *Error", tt.status, err)
		}
		if res != nil || e.Code != tt.code || e.Status != tt.status || e.Error() != tt.msg {
			t.Errorf("%d: got code %q status %d %q", tt.status, e.Code, e.Status, e.Error())
		}
		if hits.Load() != tt.attempts {
			t.Errorf("%d: %d attempts, want %d", tt.status, hits.Load(), tt.attempts)
		}
		if tt.attempts == 3 && (len(nw.attempts) != 2 || nw.attempts[0] != 1 || nw.attempts[1] != 2) {
			t.Errorf("%d: backoff asked for %v", tt.status, nw.attempts)
		}
	}
}

func TestHTTPRetryThenSuccess(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch hits.Add(1) {
		case 1:
			w.WriteHeader(429)
		case 2:
			w.WriteHeader(503)
		default:
			io.WriteString(w, okStream)
		}
	}))
	defer srv.Close()
	nw := &noWait{}
	res, err := HTTP{BaseURL: srv.URL, APIKey: testKey, Backoff: nw.backoff}.Stream(context.Background(), testReq, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello" || hits.Load() != 3 || len(nw.attempts) != 2 {
		t.Fatalf("text %q, hits %d, backoffs %v", res.Text, hits.Load(), nw.attempts)
	}
}

func TestHTTPMaxAttempts(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(503)
	}))
	defer srv.Close()
	nw := &noWait{}
	_, err := HTTP{BaseURL: srv.URL, APIKey: testKey, Backoff: nw.backoff, MaxAttempts: 5}.Stream(context.Background(), testReq, nil)
	if errCode(err) != CodeServer || hits.Load() != 5 {
		t.Fatalf("err %v after %d attempts, want SERVER after 5", err, hits.Load())
	}
	var e *Error
	if errors.As(err, &e); !e.Retryable {
		t.Fatal("503 not marked retryable")
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	nw := &noWait{}
	_, err := HTTP{BaseURL: url, APIKey: testKey, Backoff: nw.backoff}.Stream(context.Background(), testReq, nil)
	if errCode(err) != CodeConnection || len(nw.attempts) != 2 {
		t.Fatalf("err %v, backoffs %v", err, nw.attempts)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Fatal("key in error")
	}
}

func TestHTTPRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"0":                             0,
		"-1":                            0,
		"soon":                          0,
		"Fri, 02 Jan 2026 03:04:15 GMT": 10 * time.Second,
		"Fri, 02 Jan 2026 03:04:00 GMT": 0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}

	// A Retry-After wins over the backoff and is capped by MaxRetryAfter.
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(429)
			return
		}
		io.WriteString(w, okStream)
	}))
	defer srv.Close()
	nw := &noWait{}
	start := time.Now()
	_, err := HTTP{BaseURL: srv.URL, APIKey: testKey, Backoff: nw.backoff, MaxRetryAfter: 200 * time.Millisecond}.Stream(context.Background(), testReq, nil)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed < 150*time.Millisecond || elapsed > 30*time.Second {
		t.Fatalf("waited %v, want about the 200ms cap", elapsed)
	}
}

func TestHTTPEmptyBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, err := HTTP{BaseURL: srv.URL, APIKey: testKey}.Stream(context.Background(), testReq, nil)
	if errCode(err) != CodeEmptyResponse {
		t.Fatalf("err %v", err)
	}
}

func TestHTTPCutStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, okStream[:strings.Index(okStream, "data: [DONE]")])
	}))
	defer srv.Close()
	var hits int
	res, err := HTTP{BaseURL: srv.URL, APIKey: testKey, Backoff: func(int) time.Duration { hits++; return 0 }}.Stream(context.Background(), testReq, nil)
	if errCode(err) != CodeStreamClosed || hits != 0 {
		t.Fatalf("err %v, retries %d", err, hits)
	}
	if res == nil || res.Text != "hello" {
		t.Fatalf("partial response %+v", res)
	}
}

func TestHTTPCancelMidStream(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"first"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select { // hold the stream open
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var deltas []Delta
	type out struct {
		res *Response
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := HTTP{BaseURL: srv.URL, APIKey: testKey}.Stream(ctx, testReq, func(d Delta) {
			deltas = append(deltas, d)
			cancel() // the user cancels once something has arrived
		})
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		if !errors.Is(o.err, context.Canceled) || errCode(o.err) != CodeCancelled {
			t.Fatalf("err %v", o.err)
		}
		if o.res == nil || o.res.Text != "first" || len(deltas) != 1 {
			t.Fatalf("partial %+v, deltas %+v", o.res, deltas)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after cancellation")
	}
}

func TestHTTPCancelDuringBackoff(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	h := HTTP{BaseURL: srv.URL, APIKey: testKey, Backoff: func(int) time.Duration {
		cancel()
		return time.Hour
	}}
	start := time.Now()
	_, err := h.Stream(ctx, testReq, nil)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
}

func TestHTTPRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			io.WriteString(w, okStream)
		case 2: // a cut stream
			io.WriteString(w, okStream[:40])
		case 3:
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"message":"your key `+testKey+` is bad"}}`)
		case 4: // the key inside the stream, split across two writes
			io.WriteString(w, keyStream[:strings.Index(keyStream, testKey)+5])
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
			io.WriteString(w, keyStream[strings.Index(keyStream, testKey)+5:])
		}
	}))
	defer srv.Close()
	var logs bytes.Buffer
	h := HTTP{BaseURL: srv.URL, APIKey: testKey, RecordDir: dir,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	reqs := []Request{testReq, {Model: "m2", Messages: []Message{{Role: "user", Content: "two"}}}, {Model: "m3"},
		{Model: "m4", Messages: []Message{{Role: "user", Content: "my key is " + testKey}}}}
	_, err1 := h.Stream(context.Background(), reqs[0], nil)
	_, err2 := h.Stream(context.Background(), reqs[1], nil)
	_, err3 := h.Stream(context.Background(), reqs[2], nil)
	res4, err4 := h.Stream(context.Background(), reqs[3], nil)
	if err1 != nil || errCode(err2) != CodeStreamClosed || errCode(err3) != CodeInvalidRequest || err4 != nil {
		t.Fatalf("errors %v / %v / %v / %v", err1, err2, err3, err4)
	}
	if res4.Text != "key "+testKey {
		t.Fatalf("the live answer must not be redacted: %q", res4.Text)
	}
	if strings.Contains(err3.Error(), testKey) || !strings.Contains(err3.Error(), "[redacted]") {
		t.Fatalf("key not redacted from error: %v", err3)
	}
	wantSSE := []string{okStream, okStream[:40], `{"error":{"message":"your key [redacted] is bad"}}`,
		strings.ReplaceAll(keyStream, testKey, "[redacted]")}
	for i, want := range wantSSE {
		nnn := []string{"001", "002", "003", "004"}[i]
		got := readFile(t, filepath.Join(dir, nnn+".sse"))
		if string(got) != want {
			t.Errorf("%s.sse = %q, want %q", nnn, got, want)
		}
		body := readFile(t, filepath.Join(dir, nnn+".request.json"))
		wantBody, _ := MarshalRequest(reqs[i])
		wantBody = bytes.ReplaceAll(wantBody, []byte(testKey), []byte("[redacted]"))
		if !bytes.Equal(body, wantBody) || !json.Valid(body) {
			t.Errorf("%s.request.json = %s", nnn, body)
		}
		if bytes.Contains(body, []byte(testKey)) || bytes.Contains(bytes.ToLower(body), []byte("authorization")) {
			t.Errorf("%s.request.json holds the key", nnn)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 8 {
		t.Errorf("%d files recorded, want 8", len(entries))
	}
	if logs.Len() == 0 || strings.Contains(logs.String(), testKey) {
		t.Errorf("logs empty or hold the key:\n%s", logs.String())
	}

	// The recording replays to the same answer.
	rp := NewReplay(dir)
	res, err := rp.Stream(context.Background(), Request{}, nil)
	if err != nil || res.Text != "hello" {
		t.Fatalf("replay of the recording: %v %+v", err, res)
	}
}

func TestHTTPRecordNoResponse(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := HTTP{BaseURL: url, APIKey: testKey, RecordDir: dir, MaxAttempts: 1}.Stream(context.Background(), testReq, nil)
	if errCode(err) != CodeConnection {
		t.Fatalf("err %v", err)
	}
	if b := readFile(t, filepath.Join(dir, "001.sse")); len(b) != 0 {
		t.Fatalf("001.sse holds %q", b)
	}
	readFile(t, filepath.Join(dir, "001.request.json"))
}
