package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acpclient"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// sendPrompt starts a session/prompt of text (with _meta when meta is
// set) and returns the channel of its answer.
func sendPrompt(t *testing.T, h *harness, sid, text string, meta map[string]any) <-chan acpclient.Message {
	t.Helper()
	p := map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock(text)}}
	if meta != nil {
		p["_meta"] = meta
	}
	_, ch, err := h.client.Send("session/prompt", p)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// readBarrier returns once the agent has read every line sent before it:
// the agent reads its input in order and answers an unknown session's
// prompt on its read goroutine.
func readBarrier(t *testing.T, h *harness) {
	t.Helper()
	if code, _ := rpcError(t, h, "session/prompt", map[string]any{"sessionId": "sess_none", "prompt": []acp.ContentBlock{acp.TextBlock("x")}}); code != acp.CodeResourceNotFound {
		t.Fatalf("barrier prompt code %d, want -32002", code)
	}
}

// stopReasonOf waits for a prompt's answer and returns its stop reason.
func stopReasonOf(t *testing.T, ch <-chan acpclient.Message) acp.StopReason {
	t.Helper()
	select {
	case m := <-ch:
		var pr acp.PromptResponse
		if m.Error != nil || json.Unmarshal(m.Result, &pr) != nil {
			t.Fatalf("prompt answered %s / %v", m.Result, m.Error)
		}
		return pr.StopReason
	case <-time.After(60 * time.Second):
		t.Fatal("the prompt did not answer")
	}
	return ""
}

// notAnswered fails when ch already holds an answer.
func notAnswered(t *testing.T, ch <-chan acpclient.Message, what string) {
	t.Helper()
	select {
	case m := <-ch:
		t.Fatalf("%s answered early: %s / %v", what, m.Result, m.Error)
	default:
	}
}

// agentLineIndex is the index of the first agent line holding all of
// parts, -1 when none does.
func agentLineIndex(h *harness, parts ...string) int {
	for i, l := range h.tr.AgentLines() {
		ok := true
		for _, p := range parts {
			ok = ok && bytes.Contains(l, []byte(p))
		}
		if ok {
			return i
		}
	}
	return -1
}

// messageText is a chat message's content as text (a string, or the
// text parts of a list).
func messageText(m map[string]any) string {
	switch c := m["content"].(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				s, _ := pm["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return ""
}

// gatedBash is a bash call that prints "started", waits for the file
// release in the session's cwd, then prints "finished".
var gatedBash = bashCall(map[string]any{"command": "echo started; until [ -e release ]; do sleep 0.02; done; echo finished", "description": "Wait for release"})

// waitRunning waits for the first tool card to be in progress.
func waitRunning(t *testing.T, h *harness) {
	t.Helper()
	waitFor(t, func() bool {
		for _, u := range h.sessionUpdates() {
			if c, ok := toolCard(u); ok && c.Status == acp.StatusInProgress {
				return true
			}
		}
		return false
	})
}

// TestQueuedPromptE2E: a prompt sent while a command runs is accepted;
// the command finishes (nothing cancelled), the first turn ends with
// end_turn instead of asking the model again, its card final before its
// answer; the second turn's first request holds the command's result
// followed by the new message.
func TestQueuedPromptE2E(t *testing.T) {
	t.Parallel()
	f, mb := scriptedModel(t, e2etest.ToolCalls(gatedBash), e2etest.Text(nil, []string{"Second done."}, "stop"))
	h := newHarness(t, harnessOpts{model: f.client("k")})
	sid := h.start(harnessOpts{})
	first := sendPrompt(t, h, sid, "run it", nil)
	waitRunning(t, h)
	second := sendPrompt(t, h, sid, "also fix the tests", nil)
	readBarrier(t, h)
	notAnswered(t, first, "the running prompt")
	notAnswered(t, second, "the queued prompt")
	if err := os.WriteFile(filepath.Join(h.cwd, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := stopReasonOf(t, first); r != acp.StopEndTurn {
		t.Errorf("first prompt: %s, want end_turn", r)
	}
	if r := stopReasonOf(t, second); r != acp.StopEndTurn {
		t.Errorf("second prompt: %s, want end_turn", r)
	}
	if n := f.requests(); n != 2 {
		t.Fatalf("model requests = %d, want 2 (one per turn)", n)
	}
	msgs := messagesOf(t, mb.body(2))
	last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]
	if last["role"] != "user" || messageText(last) != "also fix the tests" {
		t.Errorf("second turn's request ends with %v, want the new prompt", last)
	}
	if prev["role"] != "tool" || !strings.Contains(messageText(prev), "finished") {
		t.Errorf("before the new prompt: %v, want the command's finished result", prev)
	}
	final := agentLineIndex(h, `"tool_call_update"`, `"status":"completed"`)
	answer := agentLineIndex(h, `"stopReason":"end_turn"`)
	if final < 0 || answer < 0 || final > answer {
		t.Errorf("the card's final update (line %d) must come before the first answer (line %d)", final, answer)
	}
}

// heldModel answers request 1 with a text stream it holds open until
// release is closed, then ends it with "one"; request n > 1 answers the
// text "answer n".
func heldModel(t *testing.T, release <-chan struct{}) (*fakeModel, *modelBodies) {
	mb := &modelBodies{}
	f := newFakeModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mb.mu.Lock()
		mb.bodies = append(mb.bodies, string(b))
		mb.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n > 1 {
			_, _ = io.WriteString(w, e2etest.Text(nil, []string{fmt.Sprintf("answer %d", n)}, "stop"))
			return
		}
		hs := e2etest.NewHeldStream(0)
		_, _ = io.WriteString(w, hs.Text("on"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, hs.Text("e")+hs.Done("stop"))
	})
	return f, mb
}

// TestThreeQueuedPromptsE2E: three prompts sent while the model streams
// its final text wait; the turn ends when that text ends, and they run
// in order, one turn each, each request ending with its own prompt after
// the earlier answers.
func TestThreeQueuedPromptsE2E(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	f, mb := heldModel(t, release)
	h := newHarness(t, harnessOpts{model: f.client("k")})
	sid := h.start(harnessOpts{})
	first := sendPrompt(t, h, sid, "zero", nil)
	waitFor(t, func() bool { return joined(h.sessionUpdates(), acp.UpdateAgentMessageChunk) == "on" })
	var queued []<-chan acpclient.Message
	for _, p := range []string{"one", "two", "three"} {
		queued = append(queued, sendPrompt(t, h, sid, p, nil))
	}
	readBarrier(t, h)
	close(release)
	if r := stopReasonOf(t, first); r != acp.StopEndTurn {
		t.Fatalf("first prompt: %s", r)
	}
	for i, ch := range queued {
		if r := stopReasonOf(t, ch); r != acp.StopEndTurn {
			t.Fatalf("queued prompt %d: %s", i+1, r)
		}
	}
	if n := f.requests(); n != 4 {
		t.Fatalf("model requests = %d, want 4", n)
	}
	for i, want := range []string{"one", "two", "three"} {
		msgs := messagesOf(t, mb.body(i+2))
		last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]
		wantPrev := "one"
		if i > 0 {
			wantPrev = fmt.Sprintf("answer %d", i+1)
		}
		if last["role"] != "user" || messageText(last) != want || prev["role"] != "assistant" || messageText(prev) != wantPrev {
			t.Errorf("request %d ends with %q (%v) after %q (%v), want %q after %q", i+2, messageText(last), last["role"], messageText(prev), prev["role"], want, wantPrev)
		}
	}
	// The answers come in order, each after its turn's text.
	prevLine := -1
	for i := range 4 {
		line := agentLineIndex(h, fmt.Sprintf(`"id":%d,"result":{"stopReason":"end_turn"}`, 3+i))
		if line <= prevLine {
			t.Errorf("answer %d at line %d, after line %d expected", i, line, prevLine)
		}
		prevLine = line
	}
}

// TestCancelQueueE2E: a cancel while prompts wait cancels the running
// turn and every waiting prompt: each answers cancelled, and no waiting
// prompt reaches the model.
func TestCancelQueueE2E(t *testing.T) {
	t.Parallel()
	fm := stallingModel(t)
	h := newHarness(t, harnessOpts{model: fm.client("k")})
	sid := h.start(harnessOpts{})
	running := sendPrompt(t, h, sid, "zero", nil)
	waitFor(t, func() bool { return joined(h.sessionUpdates(), acp.UpdateAgentThoughtChunk) == "hmm" })
	var all []<-chan acpclient.Message
	for _, p := range []string{"one", "two", "three"} {
		all = append(all, sendPrompt(t, h, sid, p, nil))
	}
	readBarrier(t, h)
	if code, msg := rpcError(t, h, "session/load", map[string]any{"sessionId": sid, "cwd": h.cwd, "mcpServers": []any{}}); code != acp.CodeInvalidParams {
		t.Errorf("load while prompts wait: %d %q, want -32602", code, msg)
	}
	h.cancelPrompt(sid, running, 5*time.Second)
	for i, ch := range all {
		if r := stopReasonOf(t, ch); r != acp.StopCancelled {
			t.Errorf("waiting prompt %d: %s, want cancelled", i+1, r)
		}
	}
	if n := fm.requests(); n != 1 {
		t.Errorf("model requests = %d, want 1", n)
	}
	// The session is usable again: a prompt now runs at once (the
	// staller holds it; a cancel ends it).
	again := sendPrompt(t, h, sid, "four", nil)
	waitFor(t, func() bool { return fm.requests() == 2 })
	h.cancelPrompt(sid, again, 5*time.Second)
}

// kindsWithText lists the updates of us as "kind:text" for the message
// chunks (with their messageId) and "kind:status" for the tool cards'
// final updates, in order: the shape of a turn on the wire.
func kindsWithText(us []map[string]json.RawMessage) []string {
	var out []string
	for _, u := range us {
		var kind, id, status string
		_ = json.Unmarshal(u["sessionUpdate"], &kind)
		_ = json.Unmarshal(u["messageId"], &id)
		_ = json.Unmarshal(u["status"], &status)
		var c struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(u["content"], &c)
		switch kind {
		case acp.UpdateUserMessageChunk, acp.UpdateAgentMessageChunk:
			out = append(out, kind+":"+id+":"+c.Text)
		case acp.UpdateToolCallUpdate:
			if status == "completed" || status == "failed" {
				out = append(out, kind+":"+status)
			}
		}
	}
	return out
}

// TestSteeringE2E: a prompt with _meta.steering true sent while a
// command runs joins the running turn: the command finishes, the
// turn's next request carries its result and then the steering message,
// the message is echoed as a user_message_chunk with its messageId, both
// prompts answer end_turn when the turn ends, and session/load replays
// the message in its place.
func TestSteeringE2E(t *testing.T) {
	t.Parallel()
	f, mb := scriptedModel(t, e2etest.ToolCalls(gatedBash), e2etest.Text(nil, []string{"Steered."}, "stop"))
	state := t.TempDir()
	h := newHarness(t, harnessOpts{model: f.client("k"), stateDir: state})
	sid := h.start(harnessOpts{})
	first := sendPrompt(t, h, sid, "run it", nil)
	waitRunning(t, h)
	steer := sendPrompt(t, h, sid, "use the other file", map[string]any{"steering": true})
	readBarrier(t, h)
	if err := os.WriteFile(filepath.Join(h.cwd, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := stopReasonOf(t, first); r != acp.StopEndTurn {
		t.Errorf("first prompt: %s", r)
	}
	if r := stopReasonOf(t, steer); r != acp.StopEndTurn {
		t.Errorf("steering prompt: %s", r)
	}
	if n := f.requests(); n != 2 {
		t.Fatalf("model requests = %d, want 2 (one turn, two steps)", n)
	}
	msgs := messagesOf(t, mb.body(2))
	last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]
	if last["role"] != "user" || messageText(last) != "use the other file" || prev["role"] != "tool" || !strings.Contains(messageText(prev), "finished") {
		t.Errorf("the turn's second request ends with %v after %v, want the steering message after the command's result", last, prev)
	}
	want := []string{
		"tool_call_update:completed",
		"user_message_chunk:turn1-user-steer1:use the other file",
		"agent_message_chunk:turn1-step2:Steered.",
	}
	live := kindsWithText(updatesOf(agentMsgs(t, h, 0), sid))
	if strings.Join(live, "\n") != strings.Join(want, "\n") {
		t.Errorf("live updates\n%s\nwant\n%s", strings.Join(live, "\n"), strings.Join(want, "\n"))
	}
	// Both answers follow the turn's last update.
	if a, b := agentLineIndex(h, `"Steered."`), agentLineIndex(h, `"stopReason":"end_turn"`); a < 0 || b < a {
		t.Errorf("an answer (line %d) came before the turn's text (line %d)", b, a)
	}
	h.stop()
	h2 := newHarness(t, harnessOpts{model: f.client("k"), stateDir: state, cwd: h.cwd})
	replay, err := h2.load(sid, h.cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = append([]string{"user_message_chunk:turn1-user:run it"}, want...)
	if got := kindsWithText(replay); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("replayed updates\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSteeringFinalAnswerE2E: a steering prompt sent while the model
// streams its final text makes one more request in the same turn, which
// carries the answer and then the message.
func TestSteeringFinalAnswerE2E(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	f, mb := heldModel(t, release)
	h := newHarness(t, harnessOpts{model: f.client("k")})
	sid := h.start(harnessOpts{})
	first := sendPrompt(t, h, sid, "zero", nil)
	waitFor(t, func() bool { return joined(h.sessionUpdates(), acp.UpdateAgentMessageChunk) == "on" })
	steer := sendPrompt(t, h, sid, "shorter", map[string]any{"steering": true})
	readBarrier(t, h)
	close(release)
	if r := stopReasonOf(t, first); r != acp.StopEndTurn {
		t.Errorf("first prompt: %s", r)
	}
	if r := stopReasonOf(t, steer); r != acp.StopEndTurn {
		t.Errorf("steering prompt: %s", r)
	}
	if n := f.requests(); n != 2 {
		t.Fatalf("model requests = %d, want 2", n)
	}
	msgs := messagesOf(t, mb.body(2))
	last, prev := msgs[len(msgs)-1], msgs[len(msgs)-2]
	if messageText(last) != "shorter" || messageText(prev) != "one" {
		t.Errorf("second request ends with %q after %q, want \"shorter\" after \"one\"", messageText(last), messageText(prev))
	}
	if got := kindsWithText(updatesOf(agentMsgs(t, h, 0), sid)); !strings.Contains(strings.Join(got, "\n"), "user_message_chunk:turn1-user-steer1:shorter\nagent_message_chunk:turn1-step2:answer 2") {
		t.Errorf("updates %q: no steering echo before the turn's second answer", got)
	}
}
