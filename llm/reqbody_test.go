package llm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// bigRequest is a history of n turns whose texts hold characters JSON
// escapes, some 64 KiB and more, so the streamed body crosses the
// pipe's buffer many times.
func bigRequest(n int) Request {
	req := Request{Model: "deepseek-chat", Tools: []ToolSchema{{Name: "read", Description: "Read.", Parameters: []byte(`{"type":"object"}`)}}}
	for i := range n {
		text := strings.Repeat(fmt.Sprintf("line %d \"quoted\"\t<tag> é\n", i), 1+i*97%4000)
		req.Messages = append(req.Messages,
			Message{Role: "user", Content: text},
			Message{Role: "assistant", Reasoning: "think " + text[:len(text)/3], ToolCalls: []ToolCall{{ID: fmt.Sprint("c", i), Name: "read", Arguments: `{"path":"a\nb"}`}}},
			Message{Role: "tool", ToolCallID: fmt.Sprint("c", i), Content: text})
	}
	return req
}

// TestStreamedBodyEachAttempt: every attempt of a retried request, the
// body encoded into a pipe as it is sent, carries exactly the bytes
// MarshalRequest returns.
func TestStreamedBodyEachAttempt(t *testing.T) {
	req := bigRequest(200)
	want, err := MarshalRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		n := len(bodies)
		mu.Unlock()
		if n < 3 {
			w.WriteHeader(503)
			return
		}
		io.WriteString(w, okStream)
	}))
	defer srv.Close()
	nw := &noWait{}
	res, err := HTTP{BaseURL: srv.URL, APIKey: testKey, Backoff: nw.backoff}.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello" || len(bodies) != 3 {
		t.Fatalf("text %q, %d attempts", res.Text, len(bodies))
	}
	for i, b := range bodies {
		if !bytes.Equal(b, want) {
			t.Errorf("attempt %d: body of %d bytes differs from MarshalRequest's %d", i+1, len(b), len(want))
		}
	}
	if len(want) < 4<<20 {
		t.Errorf("the body is only %d bytes: too small to cross the pipe's buffer often", len(want))
	}
}

// TestStreamedBodyServerGone: an endpoint that answers and closes the
// connection before reading the body fails the request with a clear
// error (after the retries), and no attempt hangs on its encoder.
func TestStreamedBodyServerGone(t *testing.T) {
	req := bigRequest(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hj, ok := w.(http.Hijacker)
		if !ok {
			t.Error("no hijacker")
			return
		}
		c, _, _ := hj.Hijack()
		c.Close()
	}))
	defer srv.Close()
	nw := &noWait{}
	_, err := HTTP{BaseURL: srv.URL, APIKey: testKey, Backoff: nw.backoff, MaxAttempts: 2}.Stream(context.Background(), req, nil)
	e, ok := err.(*Error)
	if !ok || e.Code != CodeConnection || !strings.Contains(e.Message, "cannot reach the model endpoint") {
		t.Fatalf("err = %#v", err)
	}
}
