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

// overlap is a session whose first prompt's turn still runs when more
// prompts arrive: the model and the bodies of its requests, the running
// prompt's answer channel, and the later prompts' channels in the order
// they were sent.
type overlap struct {
	h     *harness
	sid   string
	f     *fakeModel
	mb    *modelBodies
	first <-chan acpclient.Message
	later []<-chan acpclient.Message
}

// promptsDuringCommand sends "run it" to a model that runs gatedBash and
// then answers answer; once the command's card is in progress it sends
// texts (each with meta), waits until the agent has read them, checks
// that no prompt has answered yet and releases the command. o shapes the
// harness; its model is set here.
func promptsDuringCommand(t *testing.T, o harnessOpts, answer string, meta map[string]any, texts ...string) *overlap {
	t.Helper()
	f, mb := scriptedModel(t, e2etest.ToolCalls(gatedBash), e2etest.Text(nil, []string{answer}, "stop"))
	o.model = f.client("k")
	v := startOverlap(t, o, f, mb, "run it", func(h *harness) { waitRunning(t, h) }, meta, texts)
	notAnswered(t, v.first, "the running prompt")
	for i, ch := range v.later {
		notAnswered(t, ch, fmt.Sprintf("later prompt %d", i+1))
	}
	// The command has started (its checkpoint is taken), so the release
	// file is one of the turn's changes, every time.
	waitFor(t, func() bool { return strings.Contains(cardText(v.h.sessionUpdates()), "started") })
	if err := os.WriteFile(filepath.Join(v.h.cwd, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return v
}

// promptsDuringFinalText sends "zero" to heldModel; once the held text
// "on" has streamed it sends texts (each with meta), waits until the
// agent has read them and lets the text end. o shapes the harness; its
// model is set here.
func promptsDuringFinalText(t *testing.T, o harnessOpts, meta map[string]any, texts ...string) *overlap {
	t.Helper()
	release := make(chan struct{})
	f, mb := heldModel(t, release)
	o.model = f.client("k")
	v := startOverlap(t, o, f, mb, "zero", func(h *harness) {
		waitFor(t, func() bool { return joined(h.sessionUpdates(), acp.UpdateAgentMessageChunk) == "on" })
	}, meta, texts)
	close(release)
	return v
}

// startOverlap starts a session on a harness made from o, sends first,
// calls running (which returns once that turn is where the test wants
// it), then sends texts with meta and waits until the agent has read
// them.
func startOverlap(t *testing.T, o harnessOpts, f *fakeModel, mb *modelBodies, first string, running func(*harness), meta map[string]any, texts []string) *overlap {
	t.Helper()
	h := newHarness(t, o)
	v := &overlap{h: h, sid: h.start(harnessOpts{}), f: f, mb: mb}
	v.first = sendPrompt(t, h, v.sid, first, nil)
	running(h)
	for _, text := range texts {
		v.later = append(v.later, sendPrompt(t, h, v.sid, text, meta))
	}
	readBarrier(t, h)
	return v
}

// wantAnswers checks that the running prompt answers first and each
// later prompt the matching reason of later, then that the model was
// asked exactly requests times.
func (v *overlap) wantAnswers(t *testing.T, requests int, first acp.StopReason, later ...acp.StopReason) {
	t.Helper()
	if len(later) != len(v.later) {
		t.Fatalf("%d reasons for %d later prompts", len(later), len(v.later))
	}
	if r := stopReasonOf(t, v.first); r != first {
		t.Errorf("first prompt: %s, want %s", r, first)
	}
	for i, ch := range v.later {
		if r := stopReasonOf(t, ch); r != later[i] {
			t.Errorf("later prompt %d: %s, want %s", i+1, r, later[i])
		}
	}
	if n := v.f.requests(); n != requests {
		t.Fatalf("model requests = %d, want %d", n, requests)
	}
}

// requestTail is model request n's last two chat messages: the one
// before the last, and the last.
func (v *overlap) requestTail(t *testing.T, n int) (prev, last map[string]any) {
	t.Helper()
	msgs := messagesOf(t, v.mb.body(n))
	if len(msgs) < 2 {
		t.Fatalf("request %d has %d messages, want 2 or more", n, len(msgs))
	}
	return msgs[len(msgs)-2], msgs[len(msgs)-1]
}

// steering is the _meta of a prompt that joins the running turn.
var steering = map[string]any{"steering": true}

// TestQueuedPromptE2E: a prompt sent while a command runs is accepted;
// the command finishes (nothing cancelled), the first turn ends with
// end_turn instead of asking the model again, its card final before its
// answer; the second turn's first request holds the command's result
// followed by the new message.
func TestQueuedPromptE2E(t *testing.T) {
	t.Parallel()
	v := promptsDuringCommand(t, harnessOpts{}, "Second done.", nil, "also fix the tests")
	v.wantAnswers(t, 2, acp.StopEndTurn, acp.StopEndTurn)
	prev, last := v.requestTail(t, 2)
	if last["role"] != "user" || messageText(last) != "also fix the tests" {
		t.Errorf("second turn's request ends with %v, want the new prompt", last)
	}
	if prev["role"] != "tool" || !strings.Contains(messageText(prev), "finished") {
		t.Errorf("before the new prompt: %v, want the command's finished result", prev)
	}
	final := agentLineIndex(v.h, `"tool_call_update"`, `"status":"completed"`)
	answer := agentLineIndex(v.h, `"stopReason":"end_turn"`)
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
	v := promptsDuringFinalText(t, harnessOpts{}, nil, "one", "two", "three")
	v.wantAnswers(t, 4, acp.StopEndTurn, acp.StopEndTurn, acp.StopEndTurn, acp.StopEndTurn)
	for i, want := range []string{"one", "two", "three"} {
		prev, last := v.requestTail(t, i+2)
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
		line := agentLineIndex(v.h, fmt.Sprintf(`"id":%d,"result":{"stopReason":"end_turn"`, 3+i))
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
		var call string
		_ = json.Unmarshal(u["toolCallId"], &call)
		if strings.HasSuffix(call, "-changes") {
			continue // the turn's changes card (the release file), not the queue's
		}
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
	state := t.TempDir()
	v := promptsDuringCommand(t, harnessOpts{stateDir: state}, "Steered.", steering, "use the other file")
	v.wantAnswers(t, 2, acp.StopEndTurn, acp.StopEndTurn)
	prev, last := v.requestTail(t, 2)
	if last["role"] != "user" || messageText(last) != "use the other file" || prev["role"] != "tool" || !strings.Contains(messageText(prev), "finished") {
		t.Errorf("the turn's second request ends with %v after %v, want the steering message after the command's result", last, prev)
	}
	want := []string{
		"tool_call_update:completed",
		"user_message_chunk:turn1-user-steer1:use the other file",
		"agent_message_chunk:turn1-step2:Steered.",
	}
	live := kindsWithText(updatesOf(agentMsgs(t, v.h, 0), v.sid))
	if strings.Join(live, "\n") != strings.Join(want, "\n") {
		t.Errorf("live updates\n%s\nwant\n%s", strings.Join(live, "\n"), strings.Join(want, "\n"))
	}
	// Both answers follow the turn's last update.
	if a, b := agentLineIndex(v.h, `"Steered."`), agentLineIndex(v.h, `"stopReason":"end_turn"`); a < 0 || b < a {
		t.Errorf("an answer (line %d) came before the turn's text (line %d)", b, a)
	}
	v.h.stop()
	h2 := newHarness(t, harnessOpts{model: v.f.client("k"), stateDir: state, cwd: v.h.cwd})
	replay, err := h2.load(v.sid, v.h.cwd, nil)
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
	v := promptsDuringFinalText(t, harnessOpts{}, steering, "shorter")
	v.wantAnswers(t, 2, acp.StopEndTurn, acp.StopEndTurn)
	prev, last := v.requestTail(t, 2)
	if messageText(last) != "shorter" || messageText(prev) != "one" {
		t.Errorf("second request ends with %q after %q, want \"shorter\" after \"one\"", messageText(last), messageText(prev))
	}
	if got := kindsWithText(updatesOf(agentMsgs(t, v.h, 0), v.sid)); !strings.Contains(strings.Join(got, "\n"), "user_message_chunk:turn1-user-steer1:shorter\nagent_message_chunk:turn1-step2:answer 2") {
		t.Errorf("updates %q: no steering echo before the turn's second answer", got)
	}
}

// cardText is the text of every tool card's content in us.
func cardText(us []acp.Update) string {
	var b strings.Builder
	for _, u := range us {
		if c, ok := toolCard(u); ok {
			for _, item := range c.Content {
				if tc, ok := item.(acp.Content); ok {
					b.WriteString(tc.Content.Text)
				}
			}
		}
	}
	return b.String()
}
