// Package toolsub is the subagent tools: `subagent` runs the prompt in a
// fresh child session (the session's system instructions, the project
// context and the prompt only) and `subagent_fork` in a child that
// starts from the parent's conversation as it stood before the current
// turn. Both return the child's final answer text. The child itself is
// run by a Runner the bridge gives each session (SetRunner): the same
// agent loop, tools and permissions as the parent, under a session id
// of its own.
package toolsub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dsh-acp/dsh-acp/tools"
)

// The tools' names.
const (
	Name     = "subagent"
	ForkName = "subagent_fork"
)

// Names are both tools' names (a child session hides them from its model
// once it is as deep as children may go).
var Names = []string{Name, ForkName}

// Args are the arguments of both tools.
type Args struct {
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
}

// Request is one child run a tool call asks for.
type Request struct {
	// Fork: the child starts from the parent's conversation before the
	// current turn (subagent_fork); else from nothing (subagent).
	Fork bool
	// Description is the short label the model gave (3-5 words); Prompt
	// the task, the child's first user message.
	Description, Prompt string
}

// Outcome is how a child run ended. StopReason is an ACP stop reason
// (end_turn, max_tokens, max_turn_requests, refusal, cancelled) when the
// child's turn ended, "" when it failed (Err says why). Text is its final
// answer: the text of its last message. SessionID is the child's id;
// Lines, when set, are one line per tool call the child made (its title
// and final status), for the card of an editor that does not show child
// sessions.
type Outcome struct {
	SessionID  string
	StopReason string
	Err        error
	Text       string
	Lines      []string
}

// Runner runs children for a session. Run blocks until the child's turn
// has ended (ctx ending cancels it) and returns its outcome; an error
// means no child ran (e.g. children may not start children), and its
// text is the tool's error.
type Runner interface {
	Run(ctx context.Context, ex *tools.Exec, r Request) (Outcome, error)
}

type runnerKey struct{}

// SetRunner makes r the session's runner (call it before any tool runs).
func SetRunner(s tools.Session, r Runner) {
	s.Value(runnerKey{}, func() any { return r })
}

// RunnerOf returns the session's runner, nil when it has none.
func RunnerOf(s tools.Session) Runner {
	if s == nil {
		return nil
	}
	r, _ := s.Value(runnerKey{}, nil).(Runner)
	return r
}

// Options configure the tools.
type Options struct {
	// Sequential makes the calls run one at a time, in the model's order
	// (under --replay, so that a recording replays the same way every
	// time); else the calls of one response run at once (the runner
	// bounds how many).
	Sequential bool
}

const (
	freshDescription = `Delegate a self-contained task to a subagent: a fresh agent with the same tools (except the subagent tools) in the same project, which works on its own and returns its final answer as this tool's result.

The subagent sees none of this conversation: only the system instructions, the project context and your prompt. Write the prompt so that it stands alone: the goal, the files or names involved, what is already known, and exactly what the answer must contain. Use it for work that would fill this conversation with detail you do not need afterwards (searching a code base, reading many files, a focused change). Several subagent calls in one answer run at the same time.`

	forkDescription = `Delegate a task to a forked subagent: an agent that starts from this conversation as it stood before the current request (everything said and done in earlier turns), with the same tools (except the subagent tools), works on its own and returns its final answer as this tool's result.

Use it when the task needs what was established earlier in the conversation; the prompt still says exactly what to do and what the answer must contain. Several subagent_fork calls in one answer run at the same time.`
)

var spec = tools.Spec{
	{Name: "description", Prop: tools.Prop{Type: tools.TypeString, Required: true,
		Description: "A short (3-5 words) label of the task, shown to the user."}},
	{Name: "prompt", Prop: tools.Prop{Type: tools.TypeString, Required: true,
		Description: "The task for the subagent, self-contained: what to do and what to answer with."}},
}

// Tools returns `subagent` and `subagent_fork`.
func Tools(o Options) []tools.Tool {
	return []tools.Tool{define(Name, freshDescription, false, o), define(ForkName, forkDescription, true, o)}
}

func define(name, description string, fork bool, o Options) tools.Tool {
	return tools.Define(tools.Def[Args]{
		Name:        name,
		Description: description,
		Spec:        spec,
		// The call itself changes nothing: each call the child makes
		// passes the permission step on its own, under the parent's mode
		// and remembered answers.
		Class:           tools.ClassAgentState,
		ConcurrencySafe: !o.Sequential,
		Execute: func(ctx context.Context, ex *tools.Exec, a Args) (tools.Output, error) {
			return execute(ctx, ex, Request{Fork: fork, Description: a.Description, Prompt: a.Prompt})
		},
		PresentCall:   presentCall,
		PresentResult: presentResult,
	})
}

// Meta is the result's persisted meta: the child's session id and its
// calls' lines (Outcome.Lines), for the result card.
type Meta struct {
	SessionID string   `json:"sessionId"`
	Lines     []string `json:"lines,omitempty"`
}

// execute runs the child and turns its outcome into the tool's result.
func execute(ctx context.Context, ex *tools.Exec, r Request) (tools.Output, error) {
	if strings.TrimSpace(r.Prompt) == "" {
		return tools.Output{}, errors.New("invalid args: prompt must not be empty")
	}
	run := RunnerOf(ex.Session)
	if run == nil {
		return tools.Output{}, errors.New("subagent tool requires a calling agent (exec.agent was undefined)")
	}
	out, err := run.Run(ctx, ex, r)
	if err != nil {
		return tools.Output{}, err
	}
	if err := outcomeError(out); err != nil {
		return tools.Output{}, err
	}
	meta, _ := json.Marshal(Meta{SessionID: out.SessionID, Lines: out.Lines})
	return tools.Output{Content: []tools.Content{tools.Text(out.Text)}, Meta: meta}, nil
}

// outcomeError is the error of a run that gave no answer: the texts of
// the ported harness by stop reason, and one for an answer without text.
func outcomeError(out Outcome) error {
	switch out.StopReason {
	case "":
		if out.Err != nil {
			return fmt.Errorf("subagent run failed: %w", out.Err)
		}
		return errors.New("subagent run failed")
	case "end_turn":
	case "cancelled":
		return errors.New("subagent run was cancelled")
	case "max_tokens":
		return errors.New("subagent run hit its token limit before finishing")
	case "refusal":
		return errors.New("subagent declined the task")
	default:
		return fmt.Errorf("subagent run ended abnormally (%s)", out.StopReason)
	}
	if strings.TrimSpace(out.Text) == "" {
		return errors.New("subagent run ended without an answer: its last message had no text")
	}
	return nil
}

// presentCall is a generic card titled with the description (the
// child's title), whose input is the arguments.
func presentCall(a Args) tools.ToolCallView {
	raw, _ := json.Marshal(a)
	return tools.GenericCall{Title: Title(a.Description), Kind: tools.KindOther, RawInput: raw}
}

// presentResult shows the child's calls, one line each, then its answer;
// an error result is the fallback (its text).
func presentResult(_ Args, r tools.ResultInput) tools.ToolResultView {
	if r.IsError {
		return nil
	}
	var m Meta
	if len(r.Meta) == 0 || json.Unmarshal(r.Meta, &m) != nil || len(m.Lines) == 0 {
		return nil
	}
	return tools.GenericResult{Content: append([]tools.Content{tools.Text(strings.Join(m.Lines, "\n"))}, r.Content...)}
}

// Title is a child's title from the model's description: trimmed, or
// "Subagent" when empty.
func Title(description string) string {
	if t := strings.TrimSpace(description); t != "" {
		return t
	}
	return "Subagent"
}
