package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// subagentRecording is one recording of testdata/replay that delegates:
// its prompts, the bodies of its model requests in the order a replay
// asks for them (children of one response one at a time, in call
// order), who asks each (the last user message of the request: a
// prompt, or a child's task) and the answer each prompt ends with.
type subagentRecording struct {
	name, notes string
	prompts     []string
	bodies      []string
	askers      []string
	answers     []string
}

// subagentRecordings are the delegating sessions of the ported harness
// as recordings: a single subagent, two in one response, a subagent then
// a subagent_fork, and a fork that recalls a fact of an earlier turn.
func subagentRecordings() []subagentRecording {
	const sumTask = "What is 2+2? Answer with the number only."
	capTask, langTask := "What is the capital of France? One word.", "Which language is spoken there? One word."
	const recall = "Remember this for later: the codename is Kestrel."
	const askTask = "What codename did the user give earlier? One word."
	tools := func(step int, calls ...[2]string) string { return e2etest.ToolCallsAt(step, calls...) }
	return []subagentRecording{{
		name:    "subagent-single",
		notes:   "One `subagent` call: the parent delegates a sum, the child answers `4` (request 002, a fresh child: system prompt and its task only), the parent reports it.",
		prompts: []string{"Ask a subagent what 2+2 is."},
		bodies: []string{
			tools(0, subCall("subagent", "Compute a sum", sumTask)),
			answer("4"),
			answer("The subagent says 4."),
		},
		askers:  []string{"Ask a subagent what 2+2 is.", sumTask, "Ask a subagent what 2+2 is."},
		answers: []string{"The subagent says 4."},
	}, {
		name:    "subagent-two",
		notes:   "Two `subagent` calls in one response: under `--replay` the children run one at a time in call order (002 the first, 003 the second), and the parent gets both answers in call order (004).",
		prompts: []string{"Use two subagents: one for the capital of France, one for its language."},
		bodies: []string{
			tools(0, subCall("subagent", "Find the capital", capTask), subCall("subagent", "Find the language", langTask)),
			answer("Paris"),
			answer("French"),
			answer("Paris; French."),
		},
		askers: []string{"Use two subagents: one for the capital of France, one for its language.", capTask, langTask,
			"Use two subagents: one for the capital of France, one for its language."},
		answers: []string{"Paris; French."},
	}, {
		name:    "subagent-then-fork",
		notes:   "A `subagent` call (002, a fresh child), then a `subagent_fork` call (004, a child that starts from the conversation before the current turn: here none, so its task only), then the parent's answer (005).",
		prompts: []string{"First ask a subagent for the capital of France, then ask a forked subagent for its language."},
		bodies: []string{
			tools(0, subCall("subagent", "Find the capital", capTask)),
			answer("Paris"),
			tools(2, subCall("subagent_fork", "Find the language", langTask)),
			answer("French"),
			answer("Paris, where French is spoken."),
		},
		askers: []string{"First ask a subagent for the capital of France, then ask a forked subagent for its language.", capTask,
			"First ask a subagent for the capital of France, then ask a forked subagent for its language.", langTask,
			"First ask a subagent for the capital of France, then ask a forked subagent for its language."},
		answers: []string{"Paris, where French is spoken."},
	}, {
		name:    "subagent-fork-recall",
		notes:   "Turn 1 states a fact; in turn 2 a `subagent_fork` child (003) starts from turn 1's exchange, recalls the fact (`Kestrel`) and the parent reports it (004).",
		prompts: []string{recall, "Ask a forked subagent which codename I gave you."},
		bodies: []string{
			answer("Noted: Kestrel."),
			tools(1, subCall("subagent_fork", "Recall the codename", askTask)),
			answer("Kestrel"),
			answer("The fork recalled Kestrel."),
		},
		askers:  []string{recall, "Ask a forked subagent which codename I gave you.", askTask, "Ask a forked subagent which codename I gave you."},
		answers: []string{"Noted: Kestrel.", "The fork recalled Kestrel."},
	}}
}

// TestSubagentRecordings: the delegating recordings of testdata/replay
// are the bodies above (-update writes them, with their NOTES.md and
// input.json), and they replay: each request is the one the recording
// holds at that place (parent, children in call order, parent), and
// each prompt ends with the recorded answer.
func TestSubagentRecordings(t *testing.T) {
	root := acptest.Recordings(t)
	for _, rec := range subagentRecordings() {
		t.Run(rec.name, func(t *testing.T) {
			dir := filepath.Join(root, rec.name)
			if *update {
				writeRecording(t, dir, rec)
			}
			for i, body := range rec.bodies {
				b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%03d.sse", i+1)))
				if err != nil || string(b) != body {
					t.Fatalf("%s/%03d.sse differs from the recording's body (rerun with -update): %v", rec.name, i+1, err)
				}
			}
			model := &capturing{inner: llm.NewReplay(dir)}
			h := newHarness(t, harnessOpts{model: model, options: func(o *server.Options) { o.SubagentsSequential = true }})
			sid := h.start(harnessOpts{caps: subagentCaps})
			for i, p := range rec.prompts {
				from := len(h.notes())
				if stop, err := h.prompt(sid, p); err != nil || stop != acp.StopEndTurn {
					t.Fatalf("prompt %d = %q, %v", i+1, stop, err)
				}
				if got := joined(updatesOn(h.notes()[from:], sid), acp.UpdateAgentMessageChunk); got != rec.answers[i] {
					t.Errorf("prompt %d answered %q, want %q", i+1, got, rec.answers[i])
				}
			}
			var askers []string
			for _, r := range model.requests() {
				last := ""
				for _, m := range r.Messages {
					if m.Role == "user" {
						last = m.Content
					}
				}
				askers = append(askers, last)
			}
			if !slices.Equal(askers, rec.askers) {
				t.Errorf("the requests were asked by\n %q\nwant\n %q", askers, rec.askers)
			}
			checkSubagentOrder(t, h.notes(), sid)
		})
	}
}

// writeRecording writes rec's bodies, steps.json, NOTES.md (a summary
// line per request, as llm's TestFixturesParse reads them) and
// input.json into dir.
func writeRecording(t *testing.T, dir string, rec subagentRecording) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	var requests []map[string]any
	for i, body := range rec.bodies {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d.sse", i+1)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replay := llm.NewReplay(dir)
	for i := range rec.bodies {
		res, err := replay.Stream(context.Background(), llm.Request{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("- `%03d` (asked by %q): reasoning %d chars", i+1, rec.askers[i], utf8.RuneCountInString(res.Reasoning))
		if res.Text != "" {
			line += fmt.Sprintf(", text %q", res.Text)
		}
		lines = append(lines, line+fmt.Sprintf("; finish_reason `%s`.", res.FinishReason))
		step := map[string]any{"request": i + 1, "finish_reason": res.FinishReason}
		var calls []map[string]string
		for _, c := range res.ToolCalls {
			calls = append(calls, map[string]string{"id": c.ID, "name": c.Name, "arguments": c.Arguments})
		}
		if calls != nil {
			step["tool_calls"] = calls
		}
		requests = append(requests, step)
	}
	sb, _ := json.MarshalIndent(map[string]any{"model": e2etest.Model, "requests": requests}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "steps.json"), append(sb, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := "# " + rec.name + "\n\nWritten by hand for dsh-acp (see ../README.md) with internal/e2etest's builders; not a recorded session. `server`'s TestSubagentRecordings writes (-update) and replays it.\n\n## What it exercises\n\n" +
		rec.notes + "\n\n## Model requests\n\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []map[string]string{{"op": "initialize"}, {"op": "newSession"}}
	for _, p := range rec.prompts {
		steps = append(steps, map[string]string{"op": "prompt", "text": p})
	}
	b, _ := json.MarshalIndent(map[string]any{"steps": steps}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "input.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
