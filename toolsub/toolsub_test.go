package toolsub

import (
	"context"
	"errors"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// runnerFunc runs children with a function.
type runnerFunc func(ctx context.Context, ex *tools.Exec, r Request) (Outcome, error)

func (f runnerFunc) Run(ctx context.Context, ex *tools.Exec, r Request) (Outcome, error) {
	return f(ctx, ex, r)
}

// run calls the tool called name with args in a session whose runner
// answers out (or err), and returns the result and the request it saw.
func run(t *testing.T, name, args string, out Outcome, err error, withRunner bool) (tools.Result, Request) {
	t.Helper()
	reg := tools.NewRegistry()
	for _, tl := range Tools(Options{}) {
		if e := reg.Register(tl); e != nil {
			t.Fatal(e)
		}
	}
	s := tools.NewSession("s", t.TempDir())
	var seen Request
	if withRunner {
		SetRunner(s, runnerFunc(func(_ context.Context, _ *tools.Exec, r Request) (Outcome, error) {
			seen = r
			return out, err
		}))
	}
	return reg.Execute(context.Background(), &tools.Exec{CallID: "c1", Name: name, Args: []byte(args), Session: s}), seen
}

// TestOutcomes: the result is the child's answer; every other ending is
// an error result with the ported harness's text; the request says
// which tool asked.
func TestOutcomes(t *testing.T) {
	const args = `{"description":"Look","prompt":"find it"}`
	for _, c := range []struct {
		out  Outcome
		err  error
		want string
		fail bool
	}{
		{Outcome{StopReason: "end_turn", Text: "found"}, nil, "found", false},
		{Outcome{StopReason: "cancelled"}, nil, "Error: subagent run was cancelled", true},
		{Outcome{StopReason: "max_tokens", Text: "half"}, nil, "Error: subagent run hit its token limit before finishing", true},
		{Outcome{StopReason: "refusal"}, nil, "Error: subagent declined the task", true},
		{Outcome{StopReason: "max_turn_requests"}, nil, "Error: subagent run ended abnormally (max_turn_requests)", true},
		{Outcome{Err: errors.New("HTTP 500")}, nil, "Error: subagent run failed: HTTP 500", true},
		{Outcome{StopReason: "end_turn", Text: " \n"}, nil, "Error: subagent run ended without an answer: its last message had no text", true},
		{Outcome{}, errors.New("too deep"), "Error: too deep", true},
	} {
		for _, name := range Names {
			res, req := run(t, name, args, c.out, c.err, true)
			if res.IsError != c.fail || len(res.Content) != 1 || res.Content[0].Text != c.want {
				t.Errorf("%s %+v: %+v, want %q", name, c.out, res, c.want)
			}
			if req.Fork != (name == ForkName) || req.Prompt != "find it" || req.Description != "Look" {
				t.Errorf("%s: request %+v", name, req)
			}
		}
	}
	res, _ := run(t, Name, args, Outcome{}, nil, false)
	if !res.IsError || res.Content[0].Text != "Error: subagent tool requires a calling agent (exec.agent was undefined)" {
		t.Errorf("no runner: %+v", res)
	}
	res, _ = run(t, Name, `{"description":"Look","prompt":"  "}`, Outcome{}, nil, true)
	if !res.IsError {
		t.Errorf("an empty prompt ran: %+v", res)
	}
}

// TestCards: the call card is titled with the description; a result
// with the child's call lines shows them, then the answer.
func TestCards(t *testing.T) {
	tl := Tools(Options{Sequential: true})[0]
	if tl.ConcurrencySafe {
		t.Error("Sequential tools must run alone")
	}
	v, ok := tl.CallView([]byte(`{"description":" Find the bug ","prompt":"p"}`)).(tools.GenericCall)
	if !ok || v.Title != "Find the bug" || v.Kind != tools.KindOther {
		t.Errorf("call card %+v", v)
	}
	r, ok := tl.ResultView([]byte(`{"description":"d","prompt":"p"}`), tools.ResultInput{
		Content: []tools.Content{tools.Text("answer")}, Meta: []byte(`{"sessionId":"c","lines":["- Read a.go (completed)"]}`)}).(tools.GenericResult)
	if !ok || len(r.Content) != 2 || r.Content[0].Text != "- Read a.go (completed)" || r.Content[1].Text != "answer" {
		t.Errorf("result card %+v", r)
	}
	if v := tl.ResultView([]byte(`{"description":"d","prompt":"p"}`), tools.ResultInput{IsError: true, Content: []tools.Content{tools.Text("Error: x")}}); v != nil {
		t.Errorf("an error result card %+v, want the fallback", v)
	}
}
