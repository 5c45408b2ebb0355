package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acpclient"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/toolbash"
)

var liveCaps = map[string]any{"_meta": map[string]any{"terminal_output": true}}

// bashCall is a model tool call of bash with args (a JSON object).
func bashCall(args map[string]any) [2]string {
	b, _ := json.Marshal(args)
	return [2]string{"bash", string(b)}
}

// TestBashGoldens runs real commands through bash end to end, with and
// without the editor's live terminal, and compares the transcripts with
// their golden files (every message is schema-checked by the harness).
// Each command writes its output in one go, so the live chunks are
// deterministic.
func TestBashGoldens(t *testing.T) {
	done := e2etest.Text(nil, []string{"Done."}, "stop")
	twoLines := bashCall(map[string]any{"command": "cat <<< $'line one\\nline two'; exit 3", "description": "Print two lines"})
	silent := bashCall(map[string]any{"command": "true", "description": "Do nothing"})
	bg := bashCall(map[string]any{"command": "exit 0", "description": "Start a task", "run_in_background": true})
	cases := []struct {
		name string
		call [2]string
		caps map[string]any
	}{
		{"bash-live", twoLines, liveCaps},
		{"bash-plain", twoLines, nil},
		{"bash-silent-live", silent, liveCaps},
		{"bash-silent-plain", silent, nil},
		{"bash-background", bg, liveCaps},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := e2etest.Replay(t, e2etest.ToolCalls(c.call), done)
			h := newHarness(t, harnessOpts{replay: rec})
			sid := h.start(harnessOpts{caps: c.caps, info: map[string]string{"name": "test-client", "version": "1"}})
			stop, err := h.prompt(sid, "run it")
			if err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			checkToolCallsEnd(t, h.sessionUpdates())
			checkGolden(t, c.name, h, sid)
		})
	}
}

// timedUpdates records every session/update of h with its arrival time.
type timedUpdates struct {
	mu  sync.Mutex
	at  []time.Time
	ups []acp.Update
}

func recordTimes(h *harness) *timedUpdates {
	tu := &timedUpdates{}
	prev := h.client.OnMessage
	h.client.OnMessage = func(m acpclient.Message) {
		if m.Method == "session/update" {
			var n acp.SessionNotification
			if json.Unmarshal(m.Params, &n) == nil {
				tu.mu.Lock()
				tu.at = append(tu.at, time.Now())
				tu.ups = append(tu.ups, n.Update)
				tu.mu.Unlock()
			}
		}
		prev(m)
	}
	return tu
}

// find returns the time of the first update matching f.
func (tu *timedUpdates) find(f func(acp.Update) bool) (time.Time, bool) {
	tu.mu.Lock()
	defer tu.mu.Unlock()
	for i, u := range tu.ups {
		if f(u) {
			return tu.at[i], true
		}
	}
	return time.Time{}, false
}

func liveData(u acp.Update) string {
	if c, _ := toolCard(u); c.Meta != nil && c.Meta.TerminalOutput != nil {
		return c.Meta.TerminalOutput.Data
	}
	return ""
}

func isFinal(u acp.Update) bool {
	c, _ := toolCard(u)
	return c.Status == acp.StatusCompleted || c.Status == acp.StatusFailed
}

// TestBashTicksOnTheWire: the first line of a command that then waits
// reaches the editor while the command runs (it waits for a file the test
// creates only once tick1 has arrived), and the second line before the
// final update.
func TestBashTicksOnTheWire(t *testing.T) {
	t.Parallel()
	rec := e2etest.Replay(t, e2etest.ToolCalls(bashCall(map[string]any{"command": "printf 'tick1\\n'; until [ -e release ]; do sleep 0.02; done; printf 'tick2\\n'", "description": "Tick"})),
		e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec})
	tu := recordTimes(h)
	sid := h.start(harnessOpts{caps: liveCaps})
	_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "tick"}}})
	waitFor(t, func() bool { _, ok := tu.find(func(u acp.Update) bool { return liveData(u) == "tick1\n" }); return ok })
	if _, ok := tu.find(isFinal); ok {
		t.Fatal("the card ended before the command could")
	}
	if err := os.WriteFile(filepath.Join(h.cwd, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-ch:
		var pr acp.PromptResponse
		if m.Error != nil || json.Unmarshal(m.Result, &pr) != nil || pr.StopReason != acp.StopEndTurn {
			t.Fatalf("prompt answered %s / %v", m.Result, m.Error)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the prompt did not end")
	}
	tick2, ok2 := tu.find(func(u acp.Update) bool { return liveData(u) == "tick2\n" && !isFinal(u) })
	final, ok3 := tu.find(func(u acp.Update) bool { return u.SessionUpdateKind() == acp.UpdateToolCallUpdate && isFinal(u) })
	if !ok2 || !ok3 {
		t.Fatalf("updates missing (tick2 %v, final %v)", ok2, ok3)
	}
	if tick2.After(final) {
		t.Error("tick2 after the final update")
	}
}

// TestBashCancelE2E: cancelling a command that ignores SIGTERM answers the
// prompt cancelled at once, ends the card failed with the cancel line, and the
// command dies by SIGKILL KillGrace (3 s) later: not before (the group is
// watched from the cancel on; the kill timer starts no earlier than the
// cancel is sent), and not much after.
func TestBashCancelE2E(t *testing.T) {
	t.Parallel()
	// The shell is found by a marker in its command line (inside its PID
	// namespace $$ is another number than here).
	marker := "cancel-e2e-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	cmd := "trap '' TERM; echo ready; sleep 60 & wait # " + marker
	rec := e2etest.Replay(t, e2etest.ToolCalls(bashCall(map[string]any{"command": cmd, "description": "Hang"})))
	h := newHarness(t, harnessOpts{replay: rec})
	sid := h.start(harnessOpts{caps: liveCaps})
	_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	waitFor(t, func() bool {
		for _, u := range h.sessionUpdates() {
			if liveData(u) == "ready\n" {
				return true
			}
		}
		return false
	})
	shell, pgid := shellByMarker(marker)
	if shell == 0 {
		t.Fatal("the shell was not found")
	}
	// The group: the sandbox helper leading it, the shell and sleep.
	waitFor(t, func() bool { return len(groupMembers(pgid)) == 3 })
	cancelled := time.Now()
	// "At once" is well before the SIGKILL; what proves the answer did
	// not wait for the command is that the group is still whole after it.
	h.cancelPrompt(sid, ch, 2*time.Second)
	if n := groupMembers(pgid); len(n) != 3 || !slices.Contains(n, strconv.Itoa(shell)) {
		t.Fatalf("right after the answer the group has %v, want the helper, the shell (%d) and sleep", n, shell)
	}
	us := h.sessionUpdates()
	checkCancelledTerminal(t, us)
	checkToolCallsEnd(t, us)
	// Watch the group until it is gone; seen is when the scan that first
	// found it shrunk ended (its members died before that).
	var seen time.Time
	for {
		n := groupMembers(pgid)
		now := time.Now()
		if len(n) < 3 && seen.IsZero() {
			seen = now
		}
		if len(n) == 0 {
			break
		}
		if now.Sub(cancelled) > toolbash.KillGrace+20*time.Second {
			t.Fatalf("the group %d is still there %v after the cancel: %v", pgid, now.Sub(cancelled), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if after := seen.Sub(cancelled); after < toolbash.KillGrace {
		t.Errorf("the group lost members %v after the cancel, before the SIGKILL due at %v", after, toolbash.KillGrace)
	} else {
		t.Logf("the group died %v after the cancel", after)
	}
}

// shellByMarker finds the live bash whose command line holds marker and
// returns its pid and process group, as this process sees them (0, 0 if
// none).
func shellByMarker(marker string) (pid, pgid int) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(marker)) || !bytes.HasPrefix(b, []byte("bash\x00")) {
			continue
		}
		st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		if len(f) > 2 && f[0] != "Z" {
			pid, _ = strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pgid, _ = strconv.Atoi(f[2])
			return pid, pgid
		}
	}
	return 0, 0
}

// groupMembers lists the live (non-zombie) processes of process group
// pgid, from /proc.
func groupMembers(pgid int) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, filepath.Base(filepath.Dir(p)))
		}
	}
	return out
}

// modelBodies is a fake model that answers request n with answers[n-1]
// and keeps the request bodies.
type modelBodies struct {
	mu     sync.Mutex
	bodies []string
}

func (mb *modelBodies) body(n int) string {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if n > len(mb.bodies) {
		return ""
	}
	return mb.bodies[n-1]
}

func scriptedModel(t *testing.T, answers ...string) (*fakeModel, *modelBodies) {
	mb := &modelBodies{}
	f := newFakeModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mb.mu.Lock()
		mb.bodies = append(mb.bodies, string(b))
		mb.mu.Unlock()
		if n > len(answers) {
			http.Error(w, "no more answers", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, answers[n-1])
	})
	return f, mb
}

// messagesOf decodes the chat messages of a model request body.
func messagesOf(t *testing.T, body string) []map[string]any {
	t.Helper()
	var req struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return req.Messages
}

// TestBashLargeOutputE2E: 2 MB of output gives the model a bounded, valid
// result that says where the full output is, and the card (an editor
// without live terminals) the same, in a fence, after a few bounded
// snapshots (one per live report: the first part of the output, paced,
// then the rest at once when the command ended).
func TestBashLargeOutputE2E(t *testing.T) {
	t.Parallel()
	// The output is made first (sed holds its one long line to the end)
	// and then printed between two timestamps, so that the test knows how
	// long the output flowed, whatever the load.
	cmd := "head -c 1000000 /dev/zero | tr '\\0' 'a' | sed 's/a/é/g' > big.txt; date +%s%N > t0; printf x; cat big.txt; echo; date +%s%N > t1"
	f, mb := scriptedModel(t, e2etest.ToolCalls(bashCall(map[string]any{"command": cmd, "description": "Print a lot"})), e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{model: f.client("k")})
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "go"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	stamp := func(name string) time.Time {
		b, err := os.ReadFile(filepath.Join(h.cwd, name))
		ns, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || perr != nil {
			t.Fatalf("timestamp %s: %q, %v %v", name, b, err, perr)
		}
		return time.Unix(0, ns)
	}
	flowed := stamp("t1").Sub(stamp("t0"))
	var toolMsg string
	for _, m := range messagesOf(t, mb.body(2)) {
		if m["role"] == "tool" {
			toolMsg, _ = m["content"].(string)
		}
	}
	if !strings.Contains(toolMsg, "\n[output truncated; full output: /") || len(toolMsg) > 64000+300 || !utf8.ValidString(toolMsg) || strings.ContainsRune(toolMsg, utf8.RuneError) {
		t.Errorf("the model got %d bytes ending %q", len(toolMsg), toolMsg[max(0, len(toolMsg)-150):])
	}
	us := h.sessionUpdates()
	var last acp.ToolCallUpdate
	for i := len(us) - 1; i >= 0; i-- {
		// The command's card, not the turn's changes card after it.
		if c, ok := us[i].(acp.ToolCallUpdate); ok && isFinal(c) && !strings.HasSuffix(c.ToolCallID, "-changes") {
			last = c
			break
		}
	}
	var item acp.Content
	if len(last.Content) == 2 {
		item, _ = last.Content[1].(acp.Content)
	}
	if item.Content.Type != acp.BlockText {
		t.Fatalf("final card content %+v", last.Content)
	}
	card := item.Content.Text
	if !strings.HasPrefix(card, "```console\né") || !strings.Contains(card, "[output truncated; full output: /") || len(card) > 64000+300 || !utf8.ValidString(card) {
		t.Errorf("final card: %d bytes, starts %q, ends %q", len(card), card[:min(20, len(card))], card[max(0, len(card)-120):])
	}
	snapshots := 0
	for _, u := range us {
		if c, ok := u.(acp.ToolCallUpdate); ok && !isFinal(c) && len(c.Content) > 0 {
			snapshots++
			item, _ := c.Content[len(c.Content)-1].(acp.Content)
			if text := item.Content.Text; len(text) > 9000 || !utf8.ValidString(text) {
				t.Errorf("snapshot of %d bytes", len(text))
			}
		}
	}
	// Paced and coalesced: while the output flows (flowed, from the
	// command's own clock), the first report at once and then at most one
	// per LiveInterval, each taking what was read meanwhile (on an idle
	// machine the output comes in a few chunks of LiveChunk; on a loaded
	// one it trickles in for longer, in more, smaller reports); a couple
	// more for the last reads before the end is seen; once it has ended,
	// the rest of the first part in chunks, the note and the tail. One
	// snapshot per read (64 KiB at most) would be a dozen and more for the
	// first part alone.
	paced := int(flowed/toolbash.LiveInterval) + 3
	if max := paced + toolbash.LiveCap/toolbash.LiveChunk + 2; snapshots < 1 || snapshots > max {
		t.Errorf("%d snapshots with the output flowing for %v, want 1 to %d (one per %v, the cap in chunks, the note, the tail)", snapshots, flowed, max, toolbash.LiveInterval)
	} else {
		t.Logf("%d snapshots, the output flowing for %v (at most %d)", snapshots, flowed, max)
	}
}

// TestBashBackgroundOutlivesTurn: a background task started in one turn
// finishes after it; its notice starts no turn, reaches the model at the
// start of the next prompt's first request, and bash_output then shows
// its output. The task waits for a file the test creates once the first
// turn has ended, so that turn cannot have waited for it.
func TestBashBackgroundOutlivesTurn(t *testing.T) {
	t.Parallel()
	marker := "bg-outlives-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	cmd := "until [ -e release ]; do sleep 0.02; done; echo bg-done # " + marker
	f, mb := scriptedModel(t,
		e2etest.ToolCalls(bashCall(map[string]any{"command": cmd, "description": "Later", "run_in_background": true})),
		e2etest.Text(nil, []string{"Started."}, "stop"),
		e2etest.ToolCalls([2]string{"bash_output", `{"task_id":"bash-1"}`}),
		e2etest.Text(nil, []string{"Done."}, "stop"),
	)
	h := newHarness(t, harnessOpts{model: f.client("k")})
	sid := h.start(harnessOpts{caps: liveCaps})
	if stop, err := h.prompt(sid, "start it"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt 1 = %q, %v (a turn that waited for the task would never end)", stop, err)
	}
	if len(e2etest.ProcessesWith(marker)) == 0 {
		t.Fatal("the task is not running after the first turn")
	}
	if err := os.WriteFile(filepath.Join(h.cwd, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(e2etest.ProcessesWith(marker)) == 0 })
	// The notice is posted as soon as the task's output has ended; give a
	// notice that would start a turn the time to do it.
	time.Sleep(time.Second)
	if n := f.requests(); n != 2 {
		t.Fatalf("%d model requests before the second prompt, want 2 (a notice must not start a turn)", n)
	}
	if stop, err := h.prompt(sid, "and now?"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt 2 = %q, %v", stop, err)
	}
	notice := "background bash task bash-1 finished [status: completed, exit code: 0]. Read its output with bash_output."
	msgs := messagesOf(t, mb.body(3))
	found := -1
	for i, m := range msgs {
		if m["role"] == "user" && m["content"] == notice {
			found = i
		}
	}
	if found < 0 {
		t.Fatalf("request 3 lacks the notice; messages %v", msgs)
	}
	var out string
	for _, m := range messagesOf(t, mb.body(4)) {
		if m["role"] == "tool" {
			out, _ = m["content"].(string)
		}
	}
	if out != "bg-done\n\n[status: completed, exit code: 0]" {
		t.Errorf("bash_output gave %q", out)
	}
}

// TestSessionCloseKillsBackgroundTasks: session/close stops the session's
// background commands.
func TestSessionCloseKillsBackgroundTasks(t *testing.T) {
	marker := fmt.Sprintf("dsh_close_marker_%d", time.Now().UnixNano())
	rec := e2etest.Replay(t,
		e2etest.ToolCalls(bashCall(map[string]any{"command": "sleep 300; echo " + marker, "description": "Wait in the background", "run_in_background": true})),
		e2etest.Text(nil, []string{"Started."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec})
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "start it"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	waitFor(t, func() bool { return len(e2etest.ProcessesWith(marker)) > 0 })
	h.mustCall("session/close", map[string]any{"sessionId": sid}, nil)
	deadline := time.Now().Add(6 * time.Second)
	for len(e2etest.ProcessesWith(marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("background task still running after session/close: %q", e2etest.ProcessesWith(marker))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
