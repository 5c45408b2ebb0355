package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// limitConn is pipeConn with limits.
func limitConn(t *testing.T, lim Limits) (*echoHandler, io.WriteCloser, *bufio.Reader) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &echoHandler{notifs: make(chan string, 10)}
	h.conn = NewConnLimits(inR, outW, h, nil, lim)
	t.Cleanup(func() { inW.Close(); <-h.conn.Done(); outW.Close() })
	return h, inW, bufio.NewReader(outR)
}

// TestOversizedMessages: a line over MaxMessageBytes is answered with
// -32600 naming the limit, with the request's id wherever it stands in
// the object (none for a notification, which is dropped), and the
// connection goes on serving.
func TestOversizedMessages(t *testing.T) {
	h, in, out := limitConn(t, Limits{MaxMessageBytes: 1000})
	big := strings.Repeat("x", 5000)
	go func() {
		io.WriteString(in, `{"jsonrpc":"2.0","id":7,"method":"echo","params":{"text":"`+big+`"}}`+"\n")
		io.WriteString(in, `{"jsonrpc":"2.0","method":"echo","params":["`+big+`",{"id":1}],"id":"late"}`+"\n")
		io.WriteString(in, `{"jsonrpc":"2.0","method":"note","params":"`+big+`"}`+"\n")
		io.WriteString(in, `{"jsonrpc":"2.0","method":"note","params":"small"}`+"\n")
		io.WriteString(in, `not json `+big+"\n")
		io.WriteString(in, `{"jsonrpc":"2.0","id":8,"method":"echo","params":[1]}`+"\n")
	}()
	for _, id := range []string{`7`, `"late"`, `null`} {
		var r struct {
			ID    json.RawMessage `json:"id"`
			Error *Error          `json:"error"`
		}
		line := readLine(t, out)
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if string(r.ID) != id || r.Error == nil || r.Error.Code != CodeInvalidRequest ||
			!strings.Contains(r.Error.Message, "5") || !strings.Contains(r.Error.Message, "limit of 1000 bytes") {
			t.Errorf("answer = %s, want -32600 with id %s naming the size and the limit", line, id)
		}
	}
	if got := readLine(t, out); got != `{"id":8,"result":[1],"jsonrpc":"2.0"}` {
		t.Errorf("after the oversized lines: %s", got)
	}
	if got := <-h.notifs; got != `note "small"` {
		t.Errorf("notification = %q, want only the small one", got)
	}
}

// TestOversizedAnswerFailsTheCall: an editor's answer over the limit
// fails the call it answers instead of leaving it waiting.
func TestOversizedAnswerFailsTheCall(t *testing.T) {
	_, in, out := limitConn(t, Limits{MaxMessageBytes: 1000})
	io.WriteString(in, `{"jsonrpc":"2.0","id":"a","method":"call","params":{}}`+"\n")
	if req := readLine(t, out); !strings.Contains(req, `"client/ask"`) {
		t.Fatalf("agent request = %s", req)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"result":{"text":"`+strings.Repeat("y", 4000)+`"}}`+"\n")
	got := readLine(t, out)
	if !strings.Contains(got, `"id":"a"`) || !strings.Contains(got, `"error"`) || !strings.Contains(got, "limit of 1000 bytes") {
		t.Errorf("response = %s, want the call's failure", got)
	}
}

// endless is an input that never ends: the same line, forever, counting
// the lines handed out.
type endless struct {
	line  []byte
	off   int
	lines atomic.Int64
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], e.line[e.off:])
		n += k
		if e.off += k; e.off == len(e.line) {
			e.off = 0
			e.lines.Add(1)
		}
	}
	return n, nil
}

// hugeLine is an input of one line of n bytes, then a newline and EOF.
type hugeLine struct{ left int64 }

func (h *hugeLine) Read(p []byte) (int, error) {
	if h.left < 0 {
		return 0, io.EOF
	}
	if h.left == 0 {
		h.left = -1
		p[0] = '\n'
		return 1, nil
	}
	n := int64(len(p))
	n = min(n, h.left)
	for i := range p[:n] {
		p[i] = 'a'
	}
	p[0] = '{'
	h.left -= n
	return int(n), nil
}

// TestOversizedLineNotHeld: reading a 256 MiB line over a 1 MiB limit
// allocates about the limit, not the line (it is read through, never
// kept).
func TestOversizedLineNotHeld(t *testing.T) {
	const size, limit = 256 << 20, 1 << 20
	s := newLineStream(&hugeLine{left: size}, io.Discard, discardLog(), Limits{MaxMessageBytes: limit})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var v json.RawMessage
	err := s.ReadObject(&v)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("ReadObject = %v, want EOF after the refused line", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*limit {
		t.Errorf("reading a %d-byte line allocated %d bytes; the limit is %d", size, alloc, limit)
	}
	if cap(s.line) > 0 {
		t.Errorf("a buffer of %d bytes is kept", cap(s.line))
	}
}

// TestBackpressure: with a client that never reads our output, reading
// stops once MaxQueuedWrites answers wait; when the client reads again,
// reading resumes and every request is answered.
func TestBackpressure(t *testing.T) {
	in := &endless{line: []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}` + "\n")}
	outR, outW := io.Pipe()
	h := &echoHandler{notifs: make(chan string, 1)}
	var served atomic.Int64
	counting := countingHandler{echoHandler: h, served: &served}
	c := NewConnLimits(in, outW, counting, nil, Limits{MaxQueuedWrites: 8})
	h.conn = c
	defer func() { outR.Close(); c.Shutdown() }()
	// Wait until the count of requests read stops moving.
	last, still := int64(-1), time.Time{}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		n := served.Load()
		switch {
		case n > 100000:
			t.Fatalf("%d requests read from a client that reads nothing back: reading never paused", n)
		case n != last:
			last, still = n, time.Now()
		case time.Since(still) > 300*time.Millisecond:
			deadline = time.Time{} // paused
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !deadline.IsZero() {
		t.Fatalf("reading did not settle: %d requests read", served.Load())
	}
	paused := served.Load()
	t.Logf("reading paused after %d requests (limit 8 queued writes)", paused)
	// The client reads again: reading resumes.
	r := bufio.NewReader(outR)
	for range paused + 100 {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	if served.Load() <= paused {
		t.Errorf("reading did not resume: %d requests read", served.Load())
	}
}

// countingHandler counts the requests read.
type countingHandler struct {
	*echoHandler
	served *atomic.Int64
}

func (h countingHandler) PrepareRequest(ctx context.Context, method string, params json.RawMessage) RequestFunc {
	h.served.Add(1)
	return h.echoHandler.PrepareRequest(ctx, method, params)
}

// TestCancelReusedID: a client that reuses an id while the first request
// with it still runs cancels the running one(s) with $/cancel_request,
// also after the first ends; the answer is -32800.
func TestCancelReusedID(t *testing.T) {
	inR, in := io.Pipe()
	outR, outW := io.Pipe()
	b := &blockingHandler{release: map[string]chan struct{}{"first": make(chan struct{}), "second": make(chan struct{})}}
	c := NewConn(inR, outW, b, nil)
	t.Cleanup(func() { in.Close(); <-c.Done(); outW.Close() })
	out := bufio.NewReader(outR)
	io.WriteString(in, `{"jsonrpc":"2.0","id":5,"method":"first"}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","id":5,"method":"second"}`+"\n")
	b.waitStarted(t, 2)
	close(b.release["first"]) // the first ends; the second still runs
	if got := readLine(t, out); got != `{"id":5,"result":"first","jsonrpc":"2.0"}` {
		t.Fatalf("first = %s", got)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}`+"\n")
	got := readLine(t, out)
	if !strings.Contains(got, `"id":5`) || !strings.Contains(got, `-32800`) {
		t.Errorf("the running request after a cancel: %s, want -32800", got)
	}
}

// blockingHandler's requests run until released (or cancelled) and
// answer their method name.
type blockingHandler struct {
	mu      sync.Mutex
	started int
	release map[string]chan struct{}
}

func (b *blockingHandler) HandleNotification(context.Context, string, json.RawMessage) {}
func (b *blockingHandler) Shutdown()                                                   {}
func (b *blockingHandler) PrepareRequest(_ context.Context, method string, _ json.RawMessage) RequestFunc {
	return func(ctx context.Context) (any, error) {
		b.mu.Lock()
		b.started++
		b.mu.Unlock()
		select {
		case <-b.release[method]:
			return method, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (b *blockingHandler) waitStarted(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b.mu.Lock()
		ok := b.started >= n
		b.mu.Unlock()
		if ok {
			return
		}
	}
	t.Fatalf("fewer than %d requests started", n)
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestBigMessagesSetAside: params and results of several MiB (kept out
// of the JSON-RPC library's decoding) arrive whole, both ways; a client
// cannot forge a placeholder.
func TestBigMessagesSetAside(t *testing.T) {
	_, in, out := pipeConn(t)
	big := strings.Repeat("é\"\\x", 1<<20) // 5 MiB of text with escapes, as JSON
	enc, _ := json.Marshal(map[string]string{"text": big})
	go io.WriteString(in, `{"jsonrpc":"2.0","id":"e","method":"echo","params":`+string(enc)+`}`+"\n")
	var r struct {
		Result struct{ Text string } `json:"result"`
	}
	if err := json.Unmarshal([]byte(readLine(t, out)), &r); err != nil || r.Result.Text != big {
		t.Fatalf("echo of %d bytes: %d bytes back, %v", len(enc), len(r.Result.Text), err)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":"a","method":"call","params":{}}`+"\n")
	readLine(t, out) // client/ask
	go io.WriteString(in, `{"jsonrpc":"2.0","id":1,"result":`+string(enc)+`}`+"\n")
	if got := readLine(t, out); got != `{"id":"a","result":`+string(enc)+`,"jsonrpc":"2.0"}` {
		t.Errorf("the call's big answer: %d bytes back, want %d", len(got), len(enc))
	}
	readLine(t, out) // the Then notification
	io.WriteString(in, `{"jsonrpc":"2.0","id":"f","method":"echo","params":"dsh-acp-aside:00:1"}`+"\n")
	if got := readLine(t, out); got != `{"id":"f","result":"dsh-acp-aside:00:1","jsonrpc":"2.0"}` {
		t.Errorf("a forged placeholder: %s", got)
	}
}
