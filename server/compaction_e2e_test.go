package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/present"
	"github.com/dsh-acp/dsh-acp/session"
)

// compactionCaps are client capabilities with session.compaction and
// session.notices.
var compactionCaps = map[string]any{"session": map[string]any{"compaction": map[string]any{}, "notices": map[string]any{}}}

// full is the context a response of the recordings below leaves when
// it passes 80 % of agent.DefaultContextWindow (128,000 tokens).
var full = e2etest.LiveUsage{Prompt: 104000, Completion: 600, CacheHit: 103936, Reasoning: 90}

// small is a response's usage far below the threshold.
var small = e2etest.LiveUsage{Prompt: 2100, Completion: 80, CacheHit: 1984, Reasoning: 20}

var summaryPieces = []string{"## Summary\n", "- The user asked to read notes.txt; it says `ship on Friday`.\n", "- Next: edit it."}

// bodyBytes is the size of a request as it goes on the wire.
func bodyBytes(t *testing.T, r llm.Request) int {
	t.Helper()
	b, err := llm.MarshalRequest(r)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// roleTexts is a request's messages after the system prompt as
// "role:content" (tool calls as "assistant(tools)").
func roleTexts(r llm.Request) []string {
	var out []string
	for _, m := range r.Messages[1:] {
		switch {
		case len(m.ToolCalls) > 0:
			out = append(out, "assistant(tools)")
		default:
			out = append(out, m.Role+":"+m.Content)
		}
	}
	return out
}

// updatesFrom returns the updates of h from the i'th on.
func updatesFrom(h *harness, i int) []acp.Update {
	us := h.sessionUpdates()
	return us[min(i, len(us)):]
}

// compactionKinds lists the compaction updates of us as
// "kind:status" / "chunk:text", and the text of agent messages with
// messageId id.
func compactionKinds(us []acp.Update) []string {
	var out []string
	for _, u := range us {
		switch c := u.(type) {
		case acp.CompactionUpdate:
			e := ""
			if c.Error != nil {
				e = ":" + *c.Error
			}
			out = append(out, "update:"+c.Status+e)
		case acp.CompactionSummaryChunk:
			out = append(out, "chunk:"+c.Content.Text)
		case acp.AgentMessageChunk:
			if strings.HasPrefix(c.MessageID, "cmp_") {
				out = append(out, "message:"+c.Content.Text)
			}
		default:
			// Not a compaction's.
		}
	}
	return out
}

// TestCompactionOnRecording: the first turn's last response leaves the
// context past 80 % of the window, so the second turn first asks for a
// summary (the turn's own request, tools included, plus the summary
// instruction), streamed to the editor as compaction_summary_chunks
// between compaction_update in_progress and completed; the turn's
// request then carries the summary and the new prompt only: shorter,
// with the summary. The log keeps every event; a load replays the
// compaction with the same summary, and two loads are byte-identical.
func TestCompactionOnRecording(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	notes := filepath.Join(cwd, "notes.txt")
	if err := os.WriteFile(notes, []byte("ship on Friday\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &capturing{inner: llm.NewReplay(e2etest.Replay(t,
		e2etest.LiveToolCall([]string{"Reading the notes."}, 1, "read", fmt.Sprintf(`{"file_path":%q}`, notes), small),
		e2etest.LiveText([]string{"Done reading."}, []string{"It says ship on Friday."}, full),
		e2etest.LiveText([]string{"Summarizing."}, summaryPieces, small),
		e2etest.LiveText([]string{"Going on."}, []string{"Continuing from the summary."}, small),
	))}
	h := newHarness(t, harnessOpts{model: rec, stateDir: state, cwd: cwd, compactAt: 0.8})
	sid := h.start(harnessOpts{caps: compactionCaps})
	if stop, err := h.prompt(sid, "read notes.txt"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("first prompt = %q, %v", stop, err)
	}
	if n := len(rec.requests()); n != 2 {
		t.Fatalf("%d requests after the first turn, want 2 (no compaction below the threshold)", n)
	}
	mark := len(h.sessionUpdates())
	if stop, err := h.prompt(sid, "now edit it"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("second prompt = %q, %v", stop, err)
	}
	reqs := rec.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4 (the summary request, then the turn's)", len(reqs))
	}
	sum, turn := reqs[2], reqs[3]
	if got := roleTexts(sum); len(got) != 5 || got[0] != "user:read notes.txt" || got[1] != "assistant(tools)" ||
		!strings.HasPrefix(got[2], "tool:") || got[3] != "assistant:It says ship on Friday." || got[4] != "user:"+agent.SummaryRequest("") {
		t.Errorf("summary request messages %q", got)
	}
	if len(sum.Tools) == 0 || len(sum.Tools) != len(reqs[1].Tools) || sum.Messages[0].Content != reqs[1].Messages[0].Content {
		t.Errorf("the summary request has %d tools (the turn's %d) or another system prompt", len(sum.Tools), len(reqs[1].Tools))
	}
	summary := strings.Join(summaryPieces, "")
	if got := roleTexts(turn); !reflect.DeepEqual(got, []string{"user:" + agent.SummaryMessage(summary), "user:now edit it"}) {
		t.Errorf("the turn's request after the compaction: %q", got)
	}
	if b, a := bodyBytes(t, sum), bodyBytes(t, turn); a >= b || len(turn.Messages) >= len(sum.Messages) {
		t.Errorf("the request after the compaction is %d bytes, %d messages; the summary request %d bytes, %d messages", a, len(turn.Messages), b, len(sum.Messages))
	}
	live := compactionKinds(updatesFrom(h, mark))
	want := []string{"update:in_progress"}
	for _, p := range summaryPieces {
		want = append(want, "chunk:"+p)
	}
	want = append(want, "update:completed")
	if !reflect.DeepEqual(live, want) {
		t.Errorf("live compaction updates %q\nwant %q", live, want)
	}
	if joined(updatesFrom(h, mark), acp.UpdateAgentMessageChunk) != "Continuing from the summary." {
		t.Errorf("the second turn's answer: %q", joined(updatesFrom(h, mark), acp.UpdateAgentMessageChunk))
	}
	// The log keeps everything: the first turn's messages are all there.
	ld, err := session.ReadLog(logOf(t, state, sid))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range ld.Events {
		switch d := ev.Data.(type) {
		case session.ToolResult:
			kinds = append(kinds, "result")
		case session.Compaction:
			kinds = append(kinds, "compaction:"+d.Status)
			if d.Summary != summary || !d.Auto || d.Turn != 2 || d.Usage == nil || d.Usage.PromptTokens != small.Prompt {
				t.Errorf("logged compaction %+v", d)
			}
		case session.UserMessage:
			kinds = append(kinds, "user:"+d.Content[0].Text)
		default:
			// Only the prompts, results and compactions are checked.
		}
	}
	if !reflect.DeepEqual(kinds, []string{"user:read notes.txt", "result", "user:now edit it", "compaction:completed"}) {
		t.Errorf("logged %q", kinds)
	}
	// Replayed: the same compaction, the summary in one chunk, between
	// the second prompt and its answer; two loads are byte-identical.
	first, err := h.load(sid, cwd, compactionCaps)
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.load(sid, cwd, compactionCaps)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(first)
	b, _ := json.Marshal(second)
	if !bytes.Equal(a, b) {
		t.Errorf("two loads differ:\n%s\n%s", a, b)
	}
	replay := decodeUpdates(t, first)
	if got := compactionKinds(replay); !reflect.DeepEqual(got, []string{"update:in_progress", "chunk:" + summary, "update:completed"}) {
		t.Errorf("replayed compaction %q", got)
	}
	order := []string{}
	for _, u := range replay {
		switch c := u.(type) {
		case acp.UserMessageChunk:
			order = append(order, "user:"+c.Content.Text)
		case acp.CompactionUpdate:
			order = append(order, "compaction:"+c.Status)
		case acp.AgentMessageChunk:
			order = append(order, "agent:"+c.Content.Text)
		default:
			// The order of prompts, compaction and answers is checked.
		}
	}
	if !reflect.DeepEqual(order, []string{"user:read notes.txt", "agent:It says ship on Friday.", "user:now edit it",
		"compaction:in_progress", "compaction:completed", "agent:Continuing from the summary."}) {
		t.Errorf("replay order %q", order)
	}
}

// updateJSON re-encodes an update map.
func updateJSON(t *testing.T, m map[string]json.RawMessage) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeUpdates decodes the updates of a session/load, failing t on
// one that does not decode.
func decodeUpdates(t *testing.T, raws []map[string]json.RawMessage) []acp.Update {
	t.Helper()
	var us []acp.Update
	for _, raw := range raws {
		u, err := acp.UnmarshalUpdate(updateJSON(t, raw))
		if err != nil {
			t.Fatal(err)
		}
		us = append(us, u)
	}
	return us
}

// loadUpdates loads sid in h (session/load with caps) and decodes the
// updates it replays.
func loadUpdates(t *testing.T, h *harness, sid, cwd string, caps map[string]any) []acp.Update {
	t.Helper()
	raws, err := h.load(sid, cwd, caps)
	if err != nil {
		t.Fatal(err)
	}
	return decodeUpdates(t, raws)
}

// TestCompactionWithoutCapability: an editor without session.compaction
// is told in a short agent message of its own (not the model's, not in
// the model's history), live and replayed alike.
func TestCompactionWithoutCapability(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	rec := &capturing{inner: llm.NewReplay(e2etest.Replay(t,
		e2etest.LiveText([]string{"Hm."}, []string{"A long answer."}, full),
		e2etest.LiveText([]string{"Summarizing."}, summaryPieces, small),
		e2etest.LiveText([]string{"Ok."}, []string{"Next answer."}, small),
		e2etest.LiveText([]string{"Ok."}, []string{"Third answer."}, small),
	))}
	h := newHarness(t, harnessOpts{model: rec, stateDir: state, cwd: cwd, compactAt: 0.8})
	sid := h.start(harnessOpts{})
	h.promptAll(sid, "one", "two", "three")
	want := []string{"message:" + present.CompactingText, "message:" + present.CompactedText}
	if got := compactionKinds(h.sessionUpdates()); !reflect.DeepEqual(got, want) {
		t.Errorf("live %q\nwant %q", got, want)
	}
	for _, u := range h.sessionUpdates() {
		if _, ok := u.(acp.CompactionUpdate); ok {
			t.Error("compaction_update sent to an editor without session.compaction")
		}
	}
	// The third turn's request: the summary, the second turn, the third
	// prompt; the agent's own message is not part of it.
	if got := roleTexts(rec.requests()[3]); !reflect.DeepEqual(got, []string{"user:" + agent.SummaryMessage(strings.Join(summaryPieces, "")),
		"user:two", "assistant:Next answer.", "user:three"}) {
		t.Errorf("third turn's request %q", got)
	}
	if got := compactionKinds(loadUpdates(t, h, sid, cwd, nil)); !reflect.DeepEqual(got, want) {
		t.Errorf("replayed %q\nwant %q", got, want)
	}
}

// TestCompactionFailureKeepsHistory: the summary stream breaks off; the
// compaction fails (compaction_update failed with the reason, a notice),
// the turn goes on, and its request carries the whole history, as if no
// compaction had been tried. The failure is logged and replayed.
func TestCompactionFailureKeepsHistory(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	rec := &capturing{inner: llm.NewReplay(e2etest.Replay(t,
		e2etest.LiveText([]string{"Hm."}, []string{"First answer."}, full),
		e2etest.CutStream("## Summ"),
		e2etest.LiveText([]string{"Ok."}, []string{"Second answer."}, small),
	))}
	h := newHarness(t, harnessOpts{model: rec, stateDir: state, cwd: cwd, compactAt: 0.8})
	sid := h.start(harnessOpts{caps: compactionCaps})
	h.promptAll(sid, "one", "two")
	reqs := rec.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if got := roleTexts(reqs[2]); !reflect.DeepEqual(got, []string{"user:one", "assistant:First answer.", "user:two"}) {
		t.Errorf("the request after a failed compaction %q, want the whole history", got)
	}
	var live []string
	var notice *acp.Notice
	for _, u := range h.sessionUpdates() {
		if n, ok := u.(acp.Notice); ok {
			notice = &n
		}
	}
	live = compactionKinds(h.sessionUpdates())
	if len(live) != 3 || live[0] != "update:in_progress" || live[1] != "chunk:## Summ" || !strings.HasPrefix(live[2], "update:failed:") ||
		!strings.Contains(live[2], "ended before it was complete") {
		t.Errorf("live compaction %q", live)
	}
	if notice == nil || notice.Title != "Compaction failed" || !strings.Contains(notice.Description, "It is unchanged") {
		t.Errorf("notice %+v", notice)
	}
	us := loadUpdates(t, h, sid, cwd, compactionCaps)
	for _, u := range us {
		if _, ok := u.(acp.Notice); ok {
			t.Error("a notice was replayed")
		}
	}
	if got := compactionKinds(us); !reflect.DeepEqual(got, live) {
		t.Errorf("replayed %q, live %q", got, live)
	}
}

// TestCompactCommand: "/compact FOCUS" summarizes the conversation so far
// with the focus in the instruction, makes no other request, and the
// next turn's request carries the summary; the /compact prompt is
// replayed as the user wrote it and never sent to the model. A
// compaction mid-turn (a tool call's response past the threshold)
// summarizes everything so far, and the turn goes on from the summary.
func TestCompactCommand(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	notes := filepath.Join(cwd, "notes.txt")
	if err := os.WriteFile(notes, []byte("ship on Friday\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &capturing{inner: llm.NewReplay(e2etest.Replay(t,
		e2etest.LiveText([]string{"Hm."}, []string{"First answer."}, small),
		e2etest.LiveText([]string{"Summarizing."}, summaryPieces, small),
		e2etest.LiveToolCall([]string{"Reading."}, 1, "read", fmt.Sprintf(`{"file_path":%q}`, notes), full),
		e2etest.LiveText([]string{"Summarizing again."}, []string{"Read notes.txt: ship on Friday. Next: answer."}, small),
		e2etest.LiveText([]string{"Ok."}, []string{"Friday."}, small),
	))}
	h := newHarness(t, harnessOpts{model: rec, stateDir: state, cwd: cwd, compactAt: 0.8})
	sid := h.start(harnessOpts{caps: compactionCaps})
	if _, err := h.prompt(sid, "one"); err != nil {
		t.Fatal(err)
	}
	if stop, err := h.prompt(sid, "/compact keep the release date"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("/compact = %q, %v", stop, err)
	}
	reqs := rec.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests after /compact, want 2", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	if last != agent.SummaryRequest("keep the release date") || !strings.Contains(last, "Focus especially on: keep the release date") {
		t.Errorf("the summary request ends with %q", last)
	}
	if got := roleTexts(reqs[1]); len(got) != 3 || got[0] != "user:one" || got[1] != "assistant:First answer." {
		t.Errorf("summary request %q (the /compact prompt must not be in it)", got)
	}
	if stop, err := h.prompt(sid, "when do we ship?"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("third prompt = %q, %v", stop, err)
	}
	reqs = rec.requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	summary := strings.Join(summaryPieces, "")
	if got := roleTexts(reqs[2]); !reflect.DeepEqual(got, []string{"user:" + agent.SummaryMessage(summary), "user:when do we ship?"}) {
		t.Errorf("the request after /compact %q", got)
	}
	// The read's response filled the context: before step 2, the turn
	// so far is summarized (the earlier summary, the prompt, the call).
	if got := roleTexts(reqs[3]); len(got) != 5 || got[0] != "user:"+agent.SummaryMessage(summary) || got[2] != "assistant(tools)" ||
		got[4] != "user:"+agent.SummaryRequest("") {
		t.Errorf("mid-turn summary request %q", got)
	}
	if got := roleTexts(reqs[4]); !reflect.DeepEqual(got, []string{"user:" + agent.SummaryMessage("Read notes.txt: ship on Friday. Next: answer.")}) {
		t.Errorf("the request after the mid-turn compaction %q", got)
	}
	var users []string
	for _, u := range loadUpdates(t, h, sid, cwd, compactionCaps) {
		if c, ok := u.(acp.UserMessageChunk); ok {
			users = append(users, c.Content.Text)
		}
	}
	if !reflect.DeepEqual(users, []string{"one", "/compact keep the release date", "when do we ship?"}) {
		t.Errorf("replayed prompts %q", users)
	}
}
