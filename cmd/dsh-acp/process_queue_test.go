package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// heldEndpoint is an OpenAI-compatible endpoint whose first chat request
// streams "on", then holds the stream until release is closed (or the
// request ends) and finishes it as "one"; later requests answer "next".
// bodies keeps every request body.
type heldEndpoint struct {
	srv     *httptest.Server
	release chan struct{}
	mu      sync.Mutex
	bodies  []string
}

func newHeldEndpoint(t *testing.T) *heldEndpoint {
	e := &heldEndpoint{release: make(chan struct{})}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.bodies = append(e.bodies, string(b))
		n := len(e.bodies)
		e.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n > 1 {
			_, _ = io.WriteString(w, e2etest.Text(nil, []string{"next"}, "stop"))
			return
		}
		hs := e2etest.NewHeldStream(0)
		_, _ = io.WriteString(w, hs.Text("on"))
		w.(http.Flusher).Flush()
		select {
		case <-e.release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, hs.Text("e")+hs.Done("stop"))
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// startQueued starts the binary on e, opens a session, sends prompt 3
// ("first") and, once its text streams, prompt 4 ("second"), and waits
// until the agent has read it (the answer to prompt 5, for an unknown
// session, read after it). It returns the lines read so far.
func startQueued(t *testing.T, e *heldEndpoint) (*proc, [][]byte) {
	t.Helper()
	p := startProcWith(t, []string{"DSH_API_KEY=sk-process-test-0123456789"}, "--base-url", e.srv.URL, "--titles", "off")
	p.send(t, initLine)
	p.next(t)
	sid, _ := p.newSession(t, 2, t.TempDir(), "[]")
	p.commands(t)
	prompt := func(id int, sid, text string) {
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}}`, id, sid, text))
	}
	prompt(3, sid, "first")
	var lines [][]byte
	for {
		l := p.next(t)
		lines = append(lines, l)
		if strings.Contains(string(l), `"agent_message_chunk"`) {
			break
		}
	}
	prompt(4, sid, "second")
	prompt(5, "sess_none", "barrier")
	lines = append(lines, p.answer(t, 5)...)
	return p, lines
}

// stopReasons reads the answers to prompts 3 and 4 from lines and the
// rest of the output, in the order they come, as "id:stopReason".
func stopReasons(t *testing.T, p *proc, lines [][]byte, closed bool) []string {
	t.Helper()
	var got []string
	take := func(l []byte) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result *struct {
				StopReason string `json:"stopReason"`
			} `json:"result"`
		}
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", l)
		}
		if id := string(m.ID); (id == "3" || id == "4") && m.Result != nil {
			got = append(got, id+":"+m.Result.StopReason)
		}
	}
	for _, l := range lines {
		take(l)
	}
	if closed {
		for l := range p.lines {
			take(l)
		}
		return got
	}
	for len(got) < 2 {
		take(p.next(t))
	}
	return got
}

// TestProcessQueuedPrompt: through the binary, a prompt sent while the
// model streams the first turn's final text waits: the first turn ends
// end_turn when the text ends, then the second runs with the first
// answer in its history.
func TestProcessQueuedPrompt(t *testing.T) {
	e := newHeldEndpoint(t)
	p, lines := startQueued(t, e)
	close(e.release)
	if got := strings.Join(stopReasons(t, p, lines, false), ","); got != "3:end_turn,4:end_turn" {
		t.Errorf("answers %s, want 3:end_turn,4:end_turn", got)
	}
	e.mu.Lock()
	bodies := append([]string(nil), e.bodies...)
	e.mu.Unlock()
	if len(bodies) != 2 || !strings.HasSuffix(strings.TrimSpace(lastMessages(t, bodies[1])), `assistant:one|user:second`) {
		t.Errorf("requests %d, the second ending %q; want 2, ending with the first answer and the new prompt", len(bodies), lastMessages(t, bodies[len(bodies)-1]))
	}
	p.stdin.Close()
	if code, _ := p.wait(t); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// TestProcessQueuedPromptEOF: at stdin EOF the running prompt and the
// one waiting behind it both answer cancelled, and the process exits 0.
func TestProcessQueuedPromptEOF(t *testing.T) {
	e := newHeldEndpoint(t)
	p, lines := startQueued(t, e)
	p.stdin.Close()
	got := stopReasons(t, p, lines, true)
	if strings.Join(got, ",") != "3:cancelled,4:cancelled" && strings.Join(got, ",") != "4:cancelled,3:cancelled" {
		t.Errorf("answers %v, want both cancelled", got)
	}
	if code, _ := p.wait(t); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.bodies) != 1 {
		t.Errorf("model requests %d, want 1 (the waiting prompt never ran)", len(e.bodies))
	}
}

// lastMessages renders a chat request's last two messages as
// "role:content|role:content".
func lastMessages(t *testing.T, body string) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil || len(req.Messages) < 2 {
		t.Fatalf("request body %q: %v", body, err)
	}
	var parts []string
	for _, m := range req.Messages[len(req.Messages)-2:] {
		text, ok := m.Content.(string)
		if !ok {
			b, _ := json.Marshal(m.Content)
			text = string(b)
		}
		parts = append(parts, m.Role+":"+text)
	}
	return strings.Join(parts, "|")
}
