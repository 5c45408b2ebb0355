package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// Issue 13, items 4 and 9 to 12: the cards follow the model. The streams
// are DeepSeek's format with the arguments in many small pieces (one
// character each where the timing matters).

// streamPart is a piece of a model answer: its events (a HeldStream's
// part) are written and flushed once wait (when set) holds.
type streamPart struct {
	wait   func() bool
	what   string // what wait waits for, for the failure message
	events string
}

// gatedModel answers request n with answers[n-1], part by part: a part
// whose wait does not hold within 60 s fails the test and breaks the
// stream; a part whose wait is "until the request is cancelled" (nil
// events and what "cancel") holds the stream open until the client
// cancels. Requests past the answers get a plain "Done.".
func gatedModel(t *testing.T, answers ...[]streamPart) *fakeModel {
	return newFakeModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if n > len(answers) {
			fmt.Fprint(w, e2etest.Text(nil, []string{"Done."}, "stop"))
			return
		}
		f := w.(http.Flusher)
		for _, p := range answers[n-1] {
			if p.what == "cancel" {
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
					t.Error("the model request was not cancelled")
				}
				return
			}
			if p.wait != nil {
				deadline := time.Now().Add(60 * time.Second)
				for !p.wait() {
					if time.Now().After(deadline) {
						t.Errorf("the stream waited 60 s for %s", p.what)
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			fmt.Fprint(w, p.events)
			f.Flush()
		}
	})
}

// firstCalls returns the first tool_call of each id, in the order they
// were sent.
func firstCalls(us []acp.Update) []acp.ToolCall {
	var out []acp.ToolCall
	seen := map[string]bool{}
	for _, u := range us {
		if c, ok := u.(acp.ToolCall); ok && !seen[c.ToolCallID] {
			seen[c.ToolCallID] = true
			out = append(out, c)
		}
	}
	return out
}

// announced returns the tool_call of id sent so far.
func (h *harness) announced(id string) (acp.ToolCall, bool) {
	for _, c := range firstCalls(h.sessionUpdates()) {
		if c.ToolCallID == id {
			return c, true
		}
	}
	return acp.ToolCall{}, false
}

// cardsOf returns every tool_call and tool_call_update of id, as updates.
func cardsOf(us []acp.Update, id string) []acp.ToolCallUpdate {
	var out []acp.ToolCallUpdate
	for _, u := range us {
		if c, ok := toolCard(u); ok && c.ToolCallID == id {
			out = append(out, c)
		}
	}
	return out
}

func locPaths(ls []acp.ToolCallLocation) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Path)
	}
	return out
}

// TestCardsAnnouncedEarly (item 9, and item 12's order): a write is
// announced, with kind edit, its title and its absolute location, as soon
// as its path has streamed, while its 512 KiB content has not (the model
// stream waits for the card); a read likewise; a bash card once its
// arguments are complete, before the answer ends, with the terminal item
// and terminal_info carrying the real cwd from workdir; one tool_call per
// id, in the model's order.
func TestCardsAnnouncedEarly(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("a line of the large file\n", 512<<10/25)
	contentJSON, _ := json.Marshal(content)
	head := `{"file_path": "out/big_file.txt", "content": `
	m := e2etest.NewHeldStream(0)
	start := m.Reasoning("Writing it.") + m.Call("write", head, 0)
	rest := m.Args(string(contentJSON)+"}", 4096)
	read := m.Call("read", `{"file_path": "__tests__/a_b_.js", "limit": 5}`, 0)
	bash := m.Call("bash", `{"command": "pwd", "workdir": "sub", "description": "Where"}`, 3)
	end := m.Done("tool_calls")
	writeID, readID, bashID := m.CallID(0), m.CallID(1), m.CallID(2)
	var h *harness
	var cwd string
	writeSeen := func() bool {
		c, ok := h.announced(writeID)
		return ok && c.Kind == acp.ToolKind("edit") && c.Title == "Write out/big_file.txt" &&
			reflect.DeepEqual(locPaths(c.Locations), []string{filepath.Join(cwd, "out/big_file.txt")})
	}
	readSeen := func() bool {
		c, ok := h.announced(readID)
		return ok && c.Kind == acp.ToolKind("read") && c.Title == "Read `__tests__/a_b_.js`" &&
			reflect.DeepEqual(locPaths(c.Locations), []string{filepath.Join(cwd, "__tests__/a_b_.js")})
	}
	bashSeen := func() bool {
		c, ok := h.announced(bashID)
		return ok && c.Kind == acp.ToolKind("execute") && c.Meta != nil && c.Meta.TerminalInfo != nil &&
			c.Meta.TerminalInfo.Cwd == filepath.Join(cwd, "sub") && len(c.Content) == 2 && c.Content[1].ToolCallContentType() == acp.TerminalItem
	}
	answer := []streamPart{
		{events: start},
		// The content streams only once the card names the file.
		{wait: writeSeen, what: "the write card", events: rest},
		{events: read},
		{wait: readSeen, what: "the read card", events: bash},
		// The answer ends only once the bash card is there.
		{wait: bashSeen, what: "the bash card", events: end},
	}
	fake := gatedModel(t, answer)
	h = newHarness(t, harnessOpts{model: fake.client("k")})
	cwd = h.cwd
	for _, d := range []string{"out", "sub", "__tests__"} {
		if err := os.Mkdir(filepath.Join(cwd, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cwd, "__tests__/a_b_.js"), []byte("test()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := h.start(harnessOpts{caps: liveCaps, info: map[string]string{"name": "test-client", "version": "1"}})
	// A generous time: half a MiB streams through the race detector on a
	// loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var pr acp.PromptResponse
	if err := h.client.Call(ctx, "session/prompt", map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock("write, read, run")}}, &pr); err != nil || pr.StopReason != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", pr.StopReason, err)
	}
	us := h.sessionUpdates()
	checkToolCallsEnd(t, us)
	var order []string
	for _, c := range firstCalls(us) {
		order = append(order, c.ToolCallID)
		if c.Status != acp.StatusPending {
			t.Errorf("%s starts %s, want pending", c.ToolCallID, c.Status)
		}
	}
	// The turn's changes card (the write's file) comes last.
	if want := []string{writeID, readID, bashID, "turn1-changes"}; !reflect.DeepEqual(order, want) {
		t.Errorf("cards in the order %v, want %v", order, want)
	}
	if w, _ := h.announced(writeID); w.RawInput != nil || len(w.Content) != 0 {
		t.Errorf("the early write card shows arguments it does not have yet: %+v", w)
	}
	if got, err := os.ReadFile(filepath.Join(cwd, "out/big_file.txt")); err != nil || string(got) != content {
		t.Errorf("the file holds %d bytes (%v), want %d", len(got), err, len(content))
	}
	if got := liveOutput(us); !strings.Contains(got, filepath.Join(cwd, "sub")+"\n") {
		t.Errorf("bash ran in %q", got)
	}
}

// TestOverwriteShowsOldText (item 10): the card of a write over an
// existing file shows the real old text as soon as the preview is known,
// before the call runs and before the user is asked; oldText null only
// for a file that does not exist.
func TestOverwriteShowsOldText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, mode string
		exists     bool
	}{{"overwrite", "bypassPermissions", true}, {"overwrite asked", "default", true}, {"create", "bypassPermissions", false}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var steps []string
			if c.exists {
				steps = append(steps, e2etest.ToolCallsChunked(0, 0, [2]string{"read", `{"file_path":"notes.txt"}`}))
			}
			write := [2]string{"write", `{"file_path":"notes.txt","content":"new one\nnew two\n"}`}
			writeID := e2etest.CallID(len(steps), 0, write[0], write[1])
			steps = append(steps, e2etest.ToolCallsChunked(len(steps), 2, write), e2etest.Text(nil, []string{"Done."}, "stop"))
			h := newHarness(t, harnessOpts{replay: e2etest.Replay(t, steps...), mode: c.mode})
			path := filepath.Join(h.cwd, "notes.txt")
			old := "old one\nold two\n"
			if c.exists {
				if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The card as the client saw it when the user was asked.
			var atAsk []acp.ToolCallUpdate
			var mu sync.Mutex
			pc := &permissionClient{outcome: "allow-once"}
			h.client.OnRequest = func(method string, params json.RawMessage) (any, error) {
				mu.Lock()
				atAsk = cardsOf(h.sessionUpdates(), writeID)
				mu.Unlock()
				return pc.handle(method, params)
			}
			sid := h.start(harnessOpts{})
			if stop, err := h.prompt(sid, "rewrite it"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			us := h.sessionUpdates()
			checkToolCallsEnd(t, us)
			cards := cardsOf(us, writeID)
			// The first diff the card shows, and where in its updates.
			first, at, running := (*acp.Diff)(nil), -1, -1
			for i, u := range cards {
				if u.Status == acp.StatusInProgress && running < 0 {
					running = i
				}
				for _, item := range u.Content {
					if d, ok := item.(acp.Diff); ok {
						if first == nil {
							first, at = &d, i
						}
						if c.exists && d.OldText == nil {
							t.Errorf("update %d shows the overwrite as a new file", i)
						}
					}
				}
			}
			if first == nil || running < 0 || at > running {
				t.Fatalf("first diff at update %d, in_progress at %d: %+v", at, running, cards)
			}
			switch {
			case c.exists && (first.OldText == nil || *first.OldText != "old one\nold two" || first.NewText != "new one\nnew two"):
				t.Errorf("first diff %+v, want the old text", first)
			case !c.exists && (first.OldText != nil || first.NewText != "new one\nnew two\n"):
				t.Errorf("first diff of a new file %+v", first)
			}
			if c.mode == "default" {
				mu.Lock()
				var shown bool
				for _, u := range atAsk {
					for _, item := range u.Content {
						if d, ok := item.(acp.Diff); ok && d.OldText != nil && *d.OldText == "old one\nold two" {
							shown = true
						}
					}
				}
				mu.Unlock()
				if pc.count() != 1 || !shown {
					t.Errorf("asked %d times; the card showed the old text before: %v", pc.count(), shown)
				}
			}
			if got, _ := os.ReadFile(path); string(got) != "new one\nnew two\n" {
				t.Errorf("file %q", got)
			}
		})
	}
}

// TestLocationPerChange (item 11): an edit changing lines 40 and 45 gets
// one hunk and two locations, on the preview and on the result.
func TestLocationPerChange(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 1; i <= 60; i++ {
		if i == 40 || i == 45 {
			fmt.Fprintf(&b, "value %d = OLD\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	edit := [2]string{"edit", `{"file_path":"conf.txt","old_string":"OLD","new_string":"NEW","replace_all":true}`}
	editID := e2etest.CallID(1, 0, edit[0], edit[1])
	rec := e2etest.Replay(t,
		e2etest.ToolCallsChunked(0, 0, [2]string{"read", `{"file_path":"conf.txt"}`}),
		e2etest.ToolCallsChunked(1, 3, edit),
		e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec})
	if err := os.WriteFile(filepath.Join(h.cwd, "conf.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := h.start(harnessOpts{info: map[string]string{"name": "test-client", "version": "1"}})
	if stop, err := h.prompt(sid, "edit"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	us := h.sessionUpdates()
	path := filepath.Join(h.cwd, "conf.txt")
	var withDiffs int
	for _, u := range cardsOf(us, editID) {
		var diffs int
		for _, item := range u.Content {
			if _, ok := item.(acp.Diff); ok {
				diffs++
			}
		}
		if diffs == 0 {
			continue
		}
		withDiffs++
		if withDiffs == 1 {
			continue // the call card: the requested strings, the file without a line
		}
		var lines []int
		for _, l := range u.Locations {
			if l.Path != path || l.Line == nil {
				t.Errorf("location %+v", l)
				continue
			}
			lines = append(lines, *l.Line)
		}
		// The preview and the result: one hunk, a location per change.
		if diffs != 1 || !reflect.DeepEqual(lines, []int{40, 45}) {
			t.Errorf("update status %q: %d diffs, lines %v, want 1 diff at [40 45]", u.Status, diffs, lines)
		}
	}
	if withDiffs != 3 {
		t.Errorf("%d updates with diffs, want the call card, the preview and the result", withDiffs)
	}
	if cards := cardsOf(us, editID); cards[len(cards)-1].Status != acp.StatusCompleted {
		t.Errorf("final %+v", cards[len(cards)-1])
	}
}

// TestCancelShowsEveryCall (item 12): cards appear in the model's order
// (a shell command first, then a write and a read), and when the user
// cancels while the command runs, the calls that never started are still
// shown, as cancelled cards with their real titles; nothing of them runs.
// A call cut off mid-stream by the cancel is shown too. A session/load
// replay shows the same cards.
func TestCancelShowsEveryCall(t *testing.T) {
	t.Parallel()
	t.Run("after the answer", func(t *testing.T) {
		t.Parallel()
		calls := [][2]string{
			{"bash", `{"command":"echo started; sleep 30","description":"Wait"}`},
			{"write", `{"file_path":"never.txt","content":"x"}`},
			{"read", `{"file_path":"my_notes.md"}`},
		}
		rec := e2etest.Replay(t, e2etest.ToolCallsChunked(0, 0, calls...))
		id := func(i int) string { return e2etest.CallID(0, i, calls[i][0], calls[i][1]) }
		checkCancelReplay(t, rec, nil, func(h *harness) bool { return strings.Contains(liveOutput(h.sessionUpdates()), "started") },
			[][2]string{{id(0), "echo started; sleep 30"}, {id(1), "Write never.txt"}, {id(2), "Read `my_notes.md`"}})
	})
	t.Run("mid-stream", func(t *testing.T) {
		t.Parallel()
		m := e2etest.NewHeldStream(0)
		answer := []streamPart{
			{events: m.Reasoning("Writing it.") + m.Call("read", `{"file_path":"a.txt"}`, 0) +
				m.Call("write", `{"file_path":"half_done.txt","content":"the model was still wri`, 1)},
			{what: "cancel"},
		}
		fake := gatedModel(t, answer)
		checkCancelReplay(t, "", fake, func(h *harness) bool {
			_, ok := h.announced(m.CallID(1))
			return ok
		}, [][2]string{{m.CallID(0), "Read a.txt"}, {m.CallID(1), "Write half_done.txt"}})
	})
}

// checkCancelReplay prompts (from the recording rec, or the model fake),
// cancels once ready holds, and checks: the cards are those of want
// ({id, title}), shown once each, in that order, and end failed; nothing
// was written; a reload replays the same cards.
func checkCancelReplay(t *testing.T, rec string, fake *fakeModel, ready func(*harness) bool, want [][2]string) {
	t.Helper()
	state, cwd := t.TempDir(), t.TempDir()
	o := harnessOpts{replay: rec, stateDir: state, cwd: cwd}
	if fake != nil {
		o.model = fake.client("k")
	}
	h := newHarness(t, o)
	sid := h.start(harnessOpts{caps: liveCaps})
	_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	waitFor(t, func() bool { return ready(h) })
	h.cancelPrompt(sid, ch, 2*time.Second)
	us := h.sessionUpdates()
	checkToolCallsEnd(t, us)
	calls := firstCalls(us)
	if len(calls) != len(want) {
		t.Fatalf("%d cards, want %d: %+v", len(calls), len(want), calls)
	}
	for i, c := range calls {
		cards := cardsOf(us, c.ToolCallID)
		last := cards[len(cards)-1]
		title := c.Title
		for _, u := range cards {
			if u.Title != nil {
				title = *u.Title
			}
		}
		if c.ToolCallID != want[i][0] || title != want[i][1] || last.Status != acp.StatusFailed {
			t.Errorf("card %d: %s titled %q, ends %s; want %s titled %q, failed", i, c.ToolCallID, title, last.Status, want[i][0], want[i][1])
		}
	}
	for _, name := range []string{"never.txt", "half_done.txt"} {
		if _, err := os.Stat(filepath.Join(cwd, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
	live := updatesOf(agentMsgs(t, h, 0), sid)
	h.stop()
	h2 := newHarness(t, harnessOpts{stateDir: state, cwd: cwd})
	replay, err := h2.load(sid, cwd, liveCaps)
	if err != nil {
		t.Fatal(err)
	}
	liveCalls, replayCalls := mergeToolCalls(live), mergeToolCalls(replay)
	if len(liveCalls) != len(want) || !reflect.DeepEqual(liveCalls, replayCalls) {
		for id, lc := range liveCalls {
			if !reflect.DeepEqual(lc, replayCalls[id]) {
				t.Errorf("tool call %s\n live   %v\n replay %v", id, lc, replayCalls[id])
			}
		}
		t.Fatalf("replay differs: live %d calls, replay %d", len(liveCalls), len(replayCalls))
	}
	checkToolCallsEndRaw(t, replay)
}

// TestTitlesMarkdownSafe (item 4): a read of a path with Markdown-active
// characters is titled with the path in a code span; an edit of it and
// a shell command are titled as they are (Zed escapes edit titles and
// shows execute titles verbatim).
func TestTitlesMarkdownSafe(t *testing.T) {
	t.Parallel()
	read := [2]string{"read", `{"file_path":"__tests__/a_b_.js"}`}
	edit := [2]string{"edit", `{"file_path":"__tests__/a_b_.js","old_string":"a","new_string":"b"}`}
	bash := [2]string{"bash", `{"command":"ls *_test_*","description":"List"}`}
	rec := e2etest.Replay(t, e2etest.ToolCallsChunked(0, 0, read), e2etest.ToolCallsChunked(1, 0, edit, bash), e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec})
	if err := os.Mkdir(filepath.Join(h.cwd, "__tests__"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.cwd, "__tests__/a_b_.js"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sid := h.start(harnessOpts{caps: liveCaps})
	if stop, err := h.prompt(sid, "go"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	us := h.sessionUpdates()
	want := map[string]string{
		e2etest.CallID(0, 0, read[0], read[1]): "Read `__tests__/a_b_.js`",
		e2etest.CallID(1, 0, edit[0], edit[1]): "Edit __tests__/a_b_.js",
		e2etest.CallID(1, 1, bash[0], bash[1]): "ls *_test_*",
	}
	for id, title := range want {
		cards := cardsOf(us, id)
		if len(cards) == 0 {
			t.Errorf("no card %s", id)
			continue
		}
		for _, u := range cards {
			if u.Title != nil && *u.Title != title {
				t.Errorf("%s titled %q, want %q", id, *u.Title, title)
			}
		}
	}
}
