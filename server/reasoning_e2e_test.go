package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// missingReasoning is DeepSeek's answer to a request in thinking mode
// whose history has a tool-call turn without its reasoning_content.
const missingReasoning = `{"error":{"message":"The ` + "`reasoning_content`" + ` in the thinking mode must be passed back to the API.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`

// thinkingEndpoint is a fake DeepSeek endpoint in thinking mode: a
// request whose messages hold an assistant message with tool_calls but
// no reasoning_content is answered 400 as DeepSeek answers it; the
// others get the next of bodies. It counts, per request, the tool-call
// messages that carried their reasoning.
type thinkingEndpoint struct {
	srv *httptest.Server

	mu       sync.Mutex
	bodies   []string
	n        int
	refused  int
	withKept []int // per answered request: tool-call messages with reasoning
}

func newThinkingEndpoint(t *testing.T, bodies ...string) *thinkingEndpoint {
	e := &thinkingEndpoint{bodies: bodies}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *thinkingEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Messages []struct {
			Role      string            `json:"role"`
			Reasoning *string           `json:"reasoning_content"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
	}
	raw, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(raw, &req)
	kept := 0
	for _, m := range req.Messages {
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		if m.Reasoning == nil || *m.Reasoning == "" {
			e.mu.Lock()
			e.refused++
			e.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, missingReasoning)
			return
		}
		kept++
	}
	e.mu.Lock()
	body := ""
	if e.n < len(e.bodies) {
		body = e.bodies[e.n]
	}
	e.n++
	e.withKept = append(e.withKept, kept)
	e.mu.Unlock()
	if body == "" {
		http.Error(w, `{"error":{"message":"no more answers"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, body)
}

// kept is how many tool-call messages with reasoning request n (from 1)
// carried.
func (e *thinkingEndpoint) kept(t *testing.T, n int) int {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.refused > 0 {
		t.Fatalf("%d requests refused for a tool-call turn without its reasoning", e.refused)
	}
	if n > len(e.withKept) {
		t.Fatalf("only %d requests answered, want %d", len(e.withKept), n)
	}
	return e.withKept[n-1]
}

// TestReasoningKept: with thinking on, a turn of 50 tool steps against
// an endpoint that refuses (HTTP 400, DeepSeek's message) any request
// whose tool-call turns lost their reasoning_content runs to its end:
// every request carries the reasoning of every tool-call message before
// it; so do the requests after session/load and session/resume in
// another process, of a fork, and after a compaction (the compacted
// part excepted).
func TestReasoningKept(t *testing.T) {
	const steps = 50
	var bodies []string
	for i := range steps {
		bodies = append(bodies, e2etest.LiveToolCall([]string{fmt.Sprintf("Step %d: I will glob.", i+1)}, i, "glob",
			fmt.Sprintf(`{"pattern":"*.%d"}`, i), e2etest.LiveUsage{Prompt: 1000 + 64*i, CacheHit: 64 * i, Completion: 20, Reasoning: 8}))
	}
	bodies = append(bodies, e2etest.Text([]string{"All globbed."}, []string{"Done."}, "stop"))
	for _, text := range []string{"After load.", "After resume.", "In the fork."} {
		bodies = append(bodies, e2etest.Text([]string{"Answering."}, []string{text}, "stop"))
	}
	bodies = append(bodies, e2etest.Text(nil, []string{"Summary: fifty globs, none matched."}, "stop"),
		e2etest.LiveToolCall([]string{"One more glob."}, steps, "glob", `{"pattern":"*.go"}`, e2etest.LiveUsage{Prompt: 400, Completion: 20, Reasoning: 8}),
		e2etest.Text([]string{"Now answer."}, []string{"After compaction."}, "stop"))
	e := newThinkingEndpoint(t, bodies...)
	state := t.TempDir()
	opts := func(cwd string) harnessOpts {
		return harnessOpts{stateDir: state, cwd: cwd,
			model: llm.HTTP{BaseURL: e.srv.URL, APIKey: "sk-test-key-0123456789", Backoff: func(int) time.Duration { return time.Millisecond }},
			options: func(o *server.Options) {
				o.MaxSteps, o.Thinking, o.Provider = 64, true, llm.ProviderDeepSeek
			}}
	}
	h := newHarness(t, opts(""))
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "glob fifty times"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("the 50-step turn: %v %v", stop, err)
	}
	for n := 1; n <= steps+1; n++ {
		if got := e.kept(t, n); got != n-1 {
			t.Fatalf("request %d carried %d tool-call messages with reasoning, want %d", n, got, n-1)
		}
	}
	cwd := h.cwd
	h.stop()

	h2 := newHarness(t, opts(cwd))
	if _, err := h2.load(sid, cwd, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h2.prompt(sid, "still there?"); err != nil {
		t.Fatal(err)
	}
	if got := e.kept(t, steps+2); got != steps {
		t.Errorf("after load: %d tool-call messages with reasoning, want %d", got, steps)
	}
	h2.stop()

	h3 := newHarness(t, opts(cwd))
	h3.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	h3.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": cwd}, nil)
	if _, err := h3.prompt(sid, "and now?"); err != nil {
		t.Fatal(err)
	}
	if got := e.kept(t, steps+3); got != steps {
		t.Errorf("after resume: %d, want %d", got, steps)
	}
	var fork acp.ForkSessionResponse
	h3.mustCall("session/fork", map[string]any{"sessionId": sid, "cwd": cwd}, &fork)
	if _, err := h3.prompt(fork.SessionID, "in a fork"); err != nil {
		t.Fatal(err)
	}
	if got := e.kept(t, steps+4); got != steps {
		t.Errorf("in the fork: %d, want %d", got, steps)
	}
	// /compact: its summary request carries the whole history too; the
	// turn after it has the summary, then its own tool step with its
	// reasoning.
	if _, err := h3.prompt(sid, "/compact"); err != nil {
		t.Fatal(err)
	}
	if got := e.kept(t, steps+5); got != steps {
		t.Errorf("the compaction's request: %d, want %d", got, steps)
	}
	if _, err := h3.prompt(sid, "one more"); err != nil {
		t.Fatal(err)
	}
	if a, b := e.kept(t, steps+6), e.kept(t, steps+7); a != 0 || b != 1 {
		t.Errorf("after compaction: %d then %d tool-call messages with reasoning, want 0 then 1", a, b)
	}
}
