package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acpclient"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/toolbash"
)

// The shell command cards end to end, through real pipes and real bash.
// The harness validates every message against the ACP schema.

// textsOf is the text of each text item of content ("" for other items).
func textsOf(content []acp.ToolCallContent) []string {
	out := make([]string, len(content))
	for i, c := range content {
		if t, ok := c.(acp.Content); ok {
			out[i] = t.Content.Text
		}
	}
	return out
}

// firstToolCall returns the first tool_call of us.
func firstToolCall(t *testing.T, us []acp.Update) acp.ToolCall {
	t.Helper()
	for _, u := range us {
		if c, ok := u.(acp.ToolCall); ok {
			return c
		}
	}
	t.Fatal("no tool_call")
	return acp.ToolCall{}
}

// finalCard returns the update that closes the first tool call.
func finalCard(t *testing.T, us []acp.Update) acp.ToolCallUpdate {
	t.Helper()
	for _, u := range us {
		if c, ok := u.(acp.ToolCallUpdate); ok && isFinal(c) {
			return c
		}
	}
	t.Fatal("no final tool_call_update")
	return acp.ToolCallUpdate{}
}

// liveOutput joins every terminal_output chunk of us, in order.
func liveOutput(us []acp.Update) string {
	var b strings.Builder
	for _, u := range us {
		b.WriteString(liveData(u))
	}
	return b.String()
}

// TestBashMultiLineCommandShownWhole: a multi-line command is the whole
// title of a live terminal card; without live terminals the title is its
// first line and the content holds the whole command in a sh fence; the
// permission request repeats the card's title and content.
func TestBashMultiLineCommandShownWhole(t *testing.T) {
	cmd := "git status --short\nrm -f x.txt"
	for _, c := range []struct {
		name       string
		caps       map[string]any
		title      string
		content    []string // the texts of the items ("" for the terminal)
		lastIsTerm bool
	}{
		{"live", liveCaps, cmd, []string{"Clean up", ""}, true},
		{"plain", nil, "git status --short…", []string{"Clean up", "```sh\n" + cmd + "\n```"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := e2etest.Replay(t, e2etest.ToolCalls(bashCall(map[string]any{"command": cmd, "description": "Clean up"})),
				e2etest.Text(nil, []string{"Done."}, "stop"))
			h := newHarness(t, harnessOpts{replay: rec, mode: "default"})
			pc := &permissionClient{outcome: "allow-once"}
			h.client.OnRequest = pc.handle
			sid := h.start(harnessOpts{caps: c.caps})
			if err := os.WriteFile(filepath.Join(h.cwd, "x.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if stop, err := h.prompt(sid, "clean"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			card := firstToolCall(t, h.sessionUpdates())
			if card.Title != c.title || strings.Join(textsOf(card.Content), "|") != strings.Join(c.content, "|") ||
				(card.Content[len(card.Content)-1].ToolCallContentType() == acp.TerminalItem) != c.lastIsTerm {
				b, _ := json.Marshal(card)
				t.Errorf("card = %s", b)
			}
			if pc.count() != 1 {
				t.Fatalf("asked %d times", pc.count())
			}
			asked := pc.asked[0].ToolCall
			cardContent, _ := json.Marshal(card.Content)
			askedContent, _ := json.Marshal(asked.Content)
			if asked.Title == nil || *asked.Title != card.Title || string(askedContent) != string(cardContent) {
				b, _ := json.Marshal(asked)
				t.Errorf("permission request %s\nwant title %q and content %s", b, card.Title, cardContent)
			}
			if _, err := os.Stat(filepath.Join(h.cwd, "x.txt")); !os.IsNotExist(err) {
				t.Errorf("the second line did not run: %v", err)
			}
			checkToolCallsEnd(t, h.sessionUpdates())
		})
	}
}

// TestBashCardCappedLikeTheModel: `seq 1 2000000` (14.9 MB) sends a live
// terminal at most LiveCap bytes of output plus one truncation line, and
// the terminal ends with the tail the model gets; the final card's text
// content repeats the line, which names the spill file the model's
// notice names.
func TestBashCardCappedLikeTheModel(t *testing.T) {
	t.Parallel()
	f, mb := scriptedModel(t, e2etest.ToolCalls(bashCall(map[string]any{"command": "seq 1 2000000", "description": "Count"})), e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{model: f.client("k")})
	sid := h.start(harnessOpts{caps: liveCaps})
	if stop, err := h.prompt(sid, "count"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	var toolMsg string
	for _, m := range messagesOf(t, mb.body(2)) {
		if m["role"] == "tool" {
			toolMsg, _ = m["content"].(string)
		}
	}
	notice := regexp.MustCompile(`\n\[output truncated; full output: (/\S+-stdout\.log)\]$`).FindStringSubmatch(toolMsg)
	if notice == nil {
		t.Fatalf("the model's result ends %q", toolMsg[max(0, len(toolMsg)-200):])
	}
	modelTail := strings.TrimSuffix(toolMsg, notice[0])
	us := h.sessionUpdates()
	live := liveOutput(us)
	lineRE := regexp.MustCompile(`\n(\[output truncated; ([0-9]+) bytes left out here \(a card shows at most 1 MiB of output\); full output: ` + regexp.QuoteMeta(notice[1]) + `\])\n`)
	lines := lineRE.FindAllStringSubmatchIndex(live, -1)
	if len(lines) != 1 {
		t.Fatalf("%d truncation lines in the terminal; around 786000: %q", len(lines), live[min(len(live), 786000):min(len(live), 786400)])
	}
	line := live[lines[0][2]:lines[0][3]]
	omitted, _ := strconv.Atoi(live[lines[0][4]:lines[0][5]])
	head, tail := live[:lines[0][0]], live[lines[0][1]:]
	const total = 14888896 // bytes of seq 1 2000000
	if shown := len(head) + len(tail); shown > toolbash.LiveCap || shown+omitted != total {
		t.Errorf("shown %d bytes of output (cap %d), %d left out, of %d", shown, toolbash.LiveCap, omitted, total)
	}
	if !strings.HasPrefix(head, "1\n2\n3\n") || !strings.HasSuffix(tail, modelTail) || !strings.HasSuffix(tail, "1999999\n2000000\n") {
		t.Errorf("head starts %q, tail ends %q; the model's tail starts %q", head[:min(10, len(head))], tail[max(0, len(tail)-30):], modelTail[:20])
	}
	final := finalCard(t, us)
	if texts := textsOf(final.Content); len(texts) != 3 || texts[2] != line || final.Content[1].ToolCallContentType() != acp.TerminalItem {
		b, _ := json.Marshal(final)
		t.Errorf("final card = %.600s", b)
	}
	if final.Meta == nil || final.Meta.TerminalExit == nil || final.Meta.TerminalExit.ExitCode == nil || *final.Meta.TerminalExit.ExitCode != 0 {
		t.Errorf("terminal_exit %+v", final.Meta)
	}
}

// TestBashNoFakeOutputInTerminal: a live terminal shows what the program
// printed and nothing else: no "(no output)", no "[exit code: N]"; the
// exit is in terminal_exit only.
func TestBashNoFakeOutputInTerminal(t *testing.T) {
	calls := [][2]string{
		bashCall(map[string]any{"command": "true", "description": "Nothing"}),
		bashCall(map[string]any{"command": "exit 3", "description": "Fail"}),
		bashCall(map[string]any{"command": "echo hi; exit 4", "description": "Fail loudly"}),
	}
	rec := e2etest.Replay(t, e2etest.ToolCalls(calls...), e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec})
	sid := h.start(harnessOpts{caps: liveCaps})
	if stop, err := h.prompt(sid, "run"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	us := h.sessionUpdates()
	byCall := map[string]string{}
	var exits []string
	for _, u := range us {
		c, ok := toolCard(u)
		if !ok || c.Meta == nil {
			continue
		}
		if c.Meta.TerminalOutput != nil {
			byCall[c.ToolCallID] += c.Meta.TerminalOutput.Data
		}
		if x := c.Meta.TerminalExit; x != nil && x.ExitCode != nil {
			exits = append(exits, strconv.Itoa(*x.ExitCode))
		}
	}
	id := func(i int) string { return e2etest.CallID(0, i, calls[i][0], calls[i][1]) }
	if byCall[id(0)] != "" || byCall[id(1)] != "" || byCall[id(2)] != "hi\n" {
		t.Errorf("terminal output %q", byCall)
	}
	if got := strings.Join(exits, ","); got != "0,3,4" {
		t.Errorf("exit codes %s", got)
	}
	checkToolCallsEnd(t, us)
}

// TestBashCancelKeepsOutput: cancelling a running command keeps what the
// card showed and then says it was cancelled: a live terminal keeps its
// output and gets the cancel line (never "Error: command aborted"); a card
// without live terminals keeps its output fence and adds the line.
func TestBashCancelKeepsOutput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		caps map[string]any
	}{{"live", liveCaps}, {"plain", nil}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := e2etest.Replay(t, e2etest.ToolCalls(bashCall(map[string]any{"command": "echo ready; sleep 30", "description": "Hang"})))
			h := newHarness(t, harnessOpts{replay: rec})
			sid := h.start(harnessOpts{caps: c.caps})
			_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
			waitFor(t, func() bool {
				for _, u := range h.sessionUpdates() {
					if cu, ok := u.(acp.ToolCallUpdate); ok && (liveData(u) == "ready\n" || strings.Contains(strings.Join(textsOf(cu.Content), "|"), "ready")) {
						return true
					}
				}
				return false
			})
			h.cancelPrompt(sid, ch, 5*time.Second)
			us := h.sessionUpdates()
			final := finalCard(t, us)
			b, _ := json.Marshal(final)
			if strings.Contains(string(b), "command aborted") && !strings.Contains(string(final.RawOutput), "command aborted") {
				t.Errorf("the card shows the tool's error: %s", b)
			}
			if c.caps != nil {
				checkCancelledTerminal(t, us)
				if got := liveOutput(us); got != "ready\n[cancelled by the user]\n" {
					t.Errorf("terminal %q", got)
				}
			} else if got := strings.Join(textsOf(final.Content), "|"); final.Status != acp.StatusFailed || got != "Hang|```console\nready\n```|[cancelled by the user]" {
				t.Errorf("final card %s", b)
			}
			checkToolCallsEnd(t, us)
		})
	}
}

// TestBashOutputStreamsWithoutTerminal: a client without live terminals
// sees a slow command's output in the card's content while it runs
// (the command then waits for a file the test creates only once both
// ticks are shown), soon after it is printed, and so does a live
// terminal. The target is 100 ms; the bound here only catches a gross
// delay (a tick held back until more output comes, say, is caught by the
// wait: none comes).
func TestBashOutputStreamsWithoutTerminal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		caps map[string]any
	}{{"plain", nil}, {"live", liveCaps}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd := "echo tick1 $(date +%s%N); sleep 0.02; echo tick2 $(date +%s%N); until [ -e release ]; do sleep 0.02; done; echo tick3"
			rec := e2etest.Replay(t, e2etest.ToolCalls(bashCall(map[string]any{"command": cmd, "description": "Tick"})), e2etest.Text(nil, []string{"Done."}, "stop"))
			h := newHarness(t, harnessOpts{replay: rec})
			tu := recordTimes(h)
			sid := h.start(harnessOpts{caps: c.caps})
			_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "tick"}}})
			// shownAt is when an update first showed word (live output so
			// far, or a card's content), and the index of that update.
			shownAt := func(word string) (int, bool) {
				tu.mu.Lock()
				defer tu.mu.Unlock()
				var live strings.Builder
				for i, u := range tu.ups {
					live.WriteString(liveData(u))
					cu, _ := u.(acp.ToolCallUpdate)
					if strings.Contains(live.String(), word) || strings.Contains(strings.Join(textsOf(cu.Content), "|"), word) {
						return i, true
					}
				}
				return 0, false
			}
			waitFor(t, func() bool { _, ok := shownAt("tick2"); return ok })
			if _, ok := tu.find(isFinal); ok {
				t.Fatal("the card ended before the command could")
			}
			if err := os.WriteFile(filepath.Join(h.cwd, "release"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			var m acpclient.Message
			select {
			case m = <-ch:
			case <-time.After(60 * time.Second):
				t.Fatal("the prompt did not end")
			}
			var pr acp.PromptResponse
			if m.Error != nil || json.Unmarshal(m.Result, &pr) != nil || pr.StopReason != acp.StopEndTurn {
				t.Fatalf("prompt answered %s / %v", m.Result, m.Error)
			}
			tu.mu.Lock()
			// What the command printed: the live terminal's data, or the
			// final card's console fence (rawOutput is its exit only).
			final, result := -1, ""
			var live strings.Builder
			for i, u := range tu.ups {
				live.WriteString(liveData(u))
				// The command's card (the file it waits for is a change
				// of the turn: a changes card follows).
				if cu, ok := u.(acp.ToolCallUpdate); ok && isFinal(cu) && !strings.HasSuffix(cu.ToolCallID, "-changes") {
					final = i
					result = live.String() + strings.Join(textsOf(cu.Content), "\n")
				}
			}
			tu.mu.Unlock()
			if final < 0 {
				t.Fatal("no final update")
			}
			for _, word := range []string{"tick1", "tick2"} {
				m := regexp.MustCompile(word + ` ([0-9]+)\n`).FindStringSubmatch(result)
				if m == nil {
					t.Fatalf("result %q", result)
				}
				ns, _ := strconv.ParseInt(m[1], 10, 64)
				printed := time.Unix(0, ns)
				shown, ok := shownAt(word)
				if !ok || shown > final {
					t.Fatalf("no update showed %s before the end", word)
				}
				tu.mu.Lock()
				at := tu.at[shown]
				tu.mu.Unlock()
				if lag := at.Sub(printed); lag > 5*time.Second {
					t.Errorf("%s shown %v after it was printed", word, lag)
				}
			}
		})
	}
}
