package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// echoHandler answers "echo" with its params, "call" by calling the
// client, and records notifications.
type echoHandler struct {
	conn   *Conn
	notifs chan string
}

func (h *echoHandler) HandleNotification(_ context.Context, method string, params json.RawMessage) {
	h.notifs <- method + " " + string(params)
}

func (h *echoHandler) PrepareRequest(_ context.Context, method string, params json.RawMessage) RequestFunc {
	switch method {
	case "echo":
		return func(context.Context) (any, error) { return params, nil }
	case "fail":
		return func(ctx context.Context) (any, error) {
			Then(ctx, func() { _ = h.conn.Notify("then", nil) })
			After(ctx, func() { _ = h.conn.Notify("after", map[string]bool{"failed": true}) })
			return nil, &Error{Code: CodeInvalidParams, Message: "no"}
		}
	case "call":
		return func(ctx context.Context) (any, error) {
			var res json.RawMessage
			if err := h.conn.Call(ctx, "client/ask", map[string]int{"n": 1}, &res); err != nil {
				return nil, err
			}
			if !Then(ctx, func() { _ = h.conn.Notify("after", map[string]bool{"ok": true}) }) {
				t := "Then refused a request context"
				return nil, &Error{Code: CodeInternalError, Message: t}
			}
			return res, nil
		}
	}
	return nil
}

func (h *echoHandler) Shutdown() {}

func pipeConn(t *testing.T) (*echoHandler, io.WriteCloser, *bufio.Reader) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &echoHandler{notifs: make(chan string, 10)}
	h.conn = NewConn(inR, outW, h, nil)
	t.Cleanup(func() { inW.Close(); <-h.conn.Done(); outW.Close() })
	return h, inW, bufio.NewReader(outR)
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	l, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(l)
}

// TestCallBothWays: a request handler awaits the client's answer while
// the reader keeps serving, and a Then notification follows the response.
func TestCallBothWays(t *testing.T) {
	h, in, out := pipeConn(t)
	io.WriteString(in, `{"jsonrpc":"2.0","id":"a","method":"call","params":{}}`+"\n")
	req := readLine(t, out)
	if req != `{"id":1,"jsonrpc":"2.0","method":"client/ask","params":{"n":1}}` {
		t.Fatalf("agent request = %s", req)
	}
	// While the call is pending, notifications are still handled.
	io.WriteString(in, `{"jsonrpc":"2.0","method":"note","params":{"x":1}}`+"\n")
	if got := <-h.notifs; got != `note {"x":1}` {
		t.Errorf("notification = %q", got)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"result":{"answer":42}}`+"\n")
	if got := readLine(t, out); got != `{"id":"a","result":{"answer":42},"jsonrpc":"2.0"}` {
		t.Errorf("response = %s", got)
	}
	if got := readLine(t, out); got != `{"jsonrpc":"2.0","method":"after","params":{"ok":true}}` {
		t.Errorf("after = %s", got)
	}
}

// TestAfterError: what After registered runs after an error response
// too, while Then's functions do not.
func TestAfterError(t *testing.T) {
	_, in, out := pipeConn(t)
	io.WriteString(in, `{"jsonrpc":"2.0","id":"f","method":"fail","params":{}}`+"\n")
	if got := readLine(t, out); got != `{"id":"f","error":{"code":-32602,"message":"no"},"jsonrpc":"2.0"}` {
		t.Errorf("response = %s", got)
	}
	if got := readLine(t, out); got != `{"jsonrpc":"2.0","method":"after","params":{"failed":true}}` {
		t.Errorf("after the error = %s", got)
	}
}

// TestNotificationsInOrder: notifications reach the handler in arrival
// order.
func TestNotificationsInOrder(t *testing.T) {
	h, in, _ := pipeConn(t)
	var b strings.Builder
	for i := 0; i < 200; i++ {
		b.WriteString(`{"jsonrpc":"2.0","method":"n","params":` + itoa(i) + "}\n")
	}
	io.WriteString(in, b.String())
	for i := 0; i < 200; i++ {
		select {
		case got := <-h.notifs:
			if got != "n "+itoa(i) {
				t.Fatalf("notification %d = %q", i, got)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("timeout")
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestUnknownMethod: a nil RequestFunc answers -32601.
func TestUnknownMethod(t *testing.T) {
	_, in, out := pipeConn(t)
	io.WriteString(in, `{"jsonrpc":"2.0","id":7,"method":"nope"}`+"\n")
	if got := readLine(t, out); !strings.Contains(got, `"code":-32601`) || !strings.Contains(got, `"id":7`) {
		t.Errorf("got %s", got)
	}
}

// FuzzLineStream: no input line makes the reader panic or stop serving.
func FuzzLineStream(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`, `{`, `[]`, `{"id":1.5,"method":"x"}`, `{"id":null,"result":1}`, "\x00\xff", `{"method":"x","id":"\ud800"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.ReplaceAll(line, "\n", " ")
		inR, inW := io.Pipe()
		h := &echoHandler{notifs: make(chan string, 100)}
		c := NewConn(inR, io.Discard, h, nil)
		h.conn = c
		go func() {
			io.WriteString(inW, line+"\n")
			inW.Close()
		}()
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("connection did not end")
		}
	})
}

// BenchmarkNotifyUpdate measures encoding and writing one session/update
// (an agent message chunk, the most frequent update) to a file.
func BenchmarkNotifyUpdate(b *testing.B) {
	f, err := os.Create(os.DevNull)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	h := &echoHandler{notifs: make(chan string, 1)}
	inR, inW := io.Pipe()
	defer inW.Close()
	c := NewConn(inR, f, h, nil)
	n := SessionNotification{SessionID: "sess_0123456789abcdef", Update: AgentMessageChunk{Content: TextBlock("a chunk of streamed text, about forty bytes")}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Notify("session/update", n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
