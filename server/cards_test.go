package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/tools"
)

// cardTools are the tools the harness adds through Options.Tools: they
// exercise every card kind end to end, apart from the real tools. Fresh
// tools on every call (each Define tool keeps its own argument cache).
func cardTools() []tools.Tool {
	type pathArgs struct {
		Path string `json:"path"`
	}
	type cmdArgs struct {
		Command     string `json:"command"`
		Description string `json:"description"`
		Hang        bool   `json:"hang"`
	}
	str := func(s string) *string { return &s }
	return []tools.Tool{
		tools.Define(tools.Def[pathArgs]{
			Name: "card_generic", Description: "test: a generic read card",
			Spec: tools.Spec{{Name: "path", Prop: tools.Prop{Type: "string", Required: true}}},
			Execute: func(_ context.Context, _ *tools.Exec, a pathArgs) (tools.Output, error) {
				if a.Path == "missing.txt" {
					return tools.Output{}, &tools.Error{Name: "FsError", Code: "FS_NOT_FOUND", Message: fmt.Sprintf("cannot read %q: not found", a.Path)}
				}
				return tools.Output{Content: []tools.Content{tools.Text("1: hello")}}, nil
			},
			PresentCall: func(a pathArgs) tools.ToolCallView {
				return tools.GenericCall{Title: "Read " + a.Path, Kind: tools.KindRead, Locations: []tools.FileLocation{{Path: a.Path, Line: 1}}}
			},
		}),
		tools.Define(tools.Def[pathArgs]{
			Name: "card_diff", Description: "test: a diff card",
			Spec: tools.Spec{{Name: "path", Prop: tools.Prop{Type: "string", Required: true}}},
			Execute: func(_ context.Context, _ *tools.Exec, a pathArgs) (tools.Output, error) {
				return tools.Output{Content: []tools.Content{tools.Text("The file has been updated successfully.")}, Meta: json.RawMessage(`{"line":2}`)}, nil
			},
			PresentCall: func(a pathArgs) tools.ToolCallView {
				return tools.DiffCall{Title: "Edit " + a.Path, Diffs: []tools.FileDiff{{Path: a.Path, OldText: str("DEBUG"), NewText: "RELEASE"}}, Locations: []tools.FileLocation{{Path: a.Path}}}
			},
			PresentResult: func(a pathArgs, r tools.ResultInput) tools.ToolResultView {
				if r.IsError {
					return nil
				}
				return tools.DiffResult{Title: "Edit " + a.Path, Diffs: []tools.FileDiff{{Path: a.Path, OldText: str("mode=DEBUG\nlevel=info"), NewText: "mode=RELEASE\nlevel=info"}},
					Locations: []tools.FileLocation{{Path: a.Path, Line: 1}}}
			},
		}),
		tools.Define(tools.Def[cmdArgs]{
			Name: "card_term", Description: "test: a terminal card", Terminal: true,
			Spec: tools.Spec{
				{Name: "command", Prop: tools.Prop{Type: "string", Required: true}},
				{Name: "description", Prop: tools.Prop{Type: "string", Required: true}},
				{Name: "hang", Prop: tools.Prop{Type: "boolean"}},
			},
			Execute: func(ctx context.Context, ex *tools.Exec, a cmdArgs) (tools.Output, error) {
				ex.Report(tools.Progress{Output: "line one\n"})
				ex.Report(tools.Progress{Output: "line two\n"})
				if a.Hang {
					<-ctx.Done()
					return tools.Output{Content: []tools.Content{tools.Text("line one\nline two\n")}}, errors.New("command aborted")
				}
				return tools.Output{Content: []tools.Content{tools.Text("line one\nline two\n[exit code: 3]")}}, nil
			},
			PresentCall: func(a cmdArgs) tools.ToolCallView {
				return tools.TerminalCall{Title: a.Command, Description: a.Description}
			},
			PresentResult: func(_ cmdArgs, r tools.ResultInput) tools.ToolResultView {
				if r.IsError || len(r.Content) != 1 {
					return nil
				}
				text := r.Content[0].Text
				code, notes := 0, ""
				if i := strings.LastIndex(text, "\n[exit code: "); i >= 0 {
					fmt.Sscanf(text[i:], "\n[exit code: %d]", &code)
					text, notes = text[:i+1], text[i+1:]
				}
				return tools.TerminalResult{Output: text, Notes: notes, ExitCode: &code}
			},
		}),
	}
}

// TestCardGoldens runs each card kind end to end and compares the
// transcripts with their golden files; every message is also checked
// against the ACP schema (in the harness).
func TestCardGoldens(t *testing.T) {
	done := e2etest.Text(nil, []string{"Done."}, "stop")
	term := `{"command":"make test\necho done","description":"Run the tests"}`
	cases := []struct {
		name  string
		calls [][2]string
		caps  map[string]any
	}{
		{"card-generic", [][2]string{{"card_generic", `{"path":"src/a.go"}`}}, nil},
		{"card-generic-error", [][2]string{{"card_generic", `{"path":"missing.txt"}`}}, nil},
		{"card-invalid-args", [][2]string{{"card_generic", `{"PATH":"x"}`}}, nil},
		{"card-unknown-tool", [][2]string{{"no_such_tool", `{}`}}, nil},
		{"card-diff", [][2]string{{"card_diff", `{"path":"config.txt"}`}}, nil},
		{"card-terminal-live", [][2]string{{"card_term", term}}, map[string]any{"_meta": map[string]any{"terminal_output": true}}},
		{"card-terminal-plain", [][2]string{{"card_term", term}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := e2etest.Replay(t, e2etest.ToolCalls(c.calls...), done)
			h := newHarness(t, harnessOpts{replay: rec})
			sid := h.start(harnessOpts{caps: c.caps, info: map[string]string{"name": "test-client", "version": "1"}})
			stop, err := h.prompt(sid, "use the tool")
			if err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			checkToolCallsEnd(t, h.sessionUpdates())
			checkGolden(t, c.name, h, sid)
		})
	}
}

// checkToolCallsEnd: every announced tool call gets exactly one final
// status, and no update names a call that was not announced.
func checkToolCallsEnd(t *testing.T, us []acp.Update) {
	t.Helper()
	announced, final := map[string]bool{}, map[string]int{}
	for _, u := range us {
		switch c := u.(type) {
		case acp.ToolCall:
			if announced[c.ToolCallID] {
				t.Errorf("tool_call %s sent twice", c.ToolCallID)
			}
			announced[c.ToolCallID] = true
		case acp.ToolCallUpdate:
			if !announced[c.ToolCallID] {
				t.Errorf("tool_call_update for unannounced %s", c.ToolCallID)
			}
		default:
			// Not a card: nothing announced or finished.
			continue
		}
		if isFinal(u) {
			c, _ := toolCard(u)
			final[c.ToolCallID]++
		}
	}
	for id := range announced {
		if final[id] != 1 {
			t.Errorf("tool call %s has %d final statuses, want 1", id, final[id])
		}
	}
}

// TestCancelTerminalCard: cancelling a running terminal tool ends its card
// failed with SIGTERM and "[cancelled by the user]", and the prompt
// answers cancelled.
func TestCancelTerminalCard(t *testing.T) {
	rec := e2etest.Replay(t, e2etest.ToolCalls([2]string{"card_term", `{"command":"sleep 100","description":"Wait","hang":true}`}))
	h := newHarness(t, harnessOpts{replay: rec})
	sid := h.start(harnessOpts{caps: map[string]any{"_meta": map[string]any{"terminal_output": true}}})
	_, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	waitFor(t, func() bool {
		for _, u := range h.sessionUpdates() {
			if liveData(u) == "line two\n" {
				return true
			}
		}
		return false
	})
	h.cancelPrompt(sid, ch, 5*time.Second)
	us := h.sessionUpdates()
	checkCancelledTerminal(t, us)
	checkToolCallsEnd(t, us)
}

// BenchmarkPresentPair presents and encodes one tool_call and its final
// tool_call_update (a diff card).
func BenchmarkPresentPair(b *testing.B) {
	reg := tools.NewRegistry()
	for _, tl := range cardTools() {
		_ = reg.Register(tl)
	}
	b.ReportAllocs()
	benchPresentPair(b, reg)
}

// checkCancelledTerminal: the last update closes a live terminal card the
// way a cancelled call ends: failed, one last
// "[cancelled by the user]" line and signal SIGTERM.
func checkCancelledTerminal(t *testing.T, us []acp.Update) {
	t.Helper()
	last, _ := toolCard(us[len(us)-1])
	x := last.Meta
	if last.Status != acp.StatusFailed || x == nil || x.TerminalExit == nil || x.TerminalExit.Signal == nil || *x.TerminalExit.Signal != "SIGTERM" ||
		x.TerminalOutput == nil || x.TerminalOutput.Data != "[cancelled by the user]\n" {
		b, _ := json.Marshal(last)
		t.Errorf("final update = %s", b)
	}
}
