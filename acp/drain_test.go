package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// drainHandler serves "stuck" (a request that ignores its context until
// released) and "polite" (one that ends when its context is cancelled).
type drainHandler struct {
	release chan struct{}
}

func (h *drainHandler) HandleNotification(context.Context, string, json.RawMessage) {}

func (h *drainHandler) PrepareRequest(_ context.Context, method string, _ json.RawMessage) RequestFunc {
	switch method {
	case "stuck":
		return func(context.Context) (any, error) { <-h.release; return "late", nil }
	case "polite":
		return func(ctx context.Context) (any, error) { <-ctx.Done(); return nil, ctx.Err() }
	}
	return nil
}

func (h *drainHandler) Shutdown() {}

// TestDrainBound: at the end of input the connection cancels what runs,
// answers the requests that end on cancel at once, and waits DrainTimeout
// (no more, no less) for one that does not before it closes without that
// answer. The bubble's clock makes the bound exact.
func TestDrainBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		h := &drainHandler{release: make(chan struct{})}
		c := NewConn(inR, outW, h, nil)
		lines := make(chan string, 8)
		go func() {
			sc := bufio.NewScanner(outR)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"stuck"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"polite"}`+"\n"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // both requests are running
		start := time.Now()
		inW.Close()
		synctest.Wait()
		var early []string
		for len(lines) > 0 {
			early = append(early, <-lines)
		}
		if len(early) != 1 || !strings.Contains(early[0], `"id":2`) {
			t.Errorf("answered at the end of input: %q, want the polite request's answer only", early)
		}
		<-c.Done()
		if took := time.Since(start); took != DrainTimeout {
			t.Errorf("the connection closed %v after the end of input, want DrainTimeout (%v)", took, DrainTimeout)
		}
		close(h.release)
		outW.Close()
		for l := range lines {
			if strings.Contains(l, `"id":1`) {
				t.Errorf("the stuck request was answered after the drain: %s", l)
			}
		}
	})
}
