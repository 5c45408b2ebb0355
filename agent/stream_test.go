package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// piecemeal streams each call's arguments in pieces of 3 bytes, then
// returns resp; with cut > 0 it stops after that many pieces of the last
// call, cancels the turn and fails as a cancelled stream does.
type piecemeal struct {
	resp   *llm.Response
	cut    int
	cancel context.CancelFunc
}

func (p *piecemeal) Stream(ctx context.Context, _ llm.Request, on func(llm.Delta)) (*llm.Response, error) {
	for i, c := range p.resp.ToolCalls {
		on(llm.Delta{Kind: llm.DeltaToolCall, Index: i, ID: c.ID, Name: c.Name})
		for k, j := 0, 0; j < len(c.Arguments); k, j = k+1, j+3 {
			if p.cut > 0 && i == len(p.resp.ToolCalls)-1 && k == p.cut {
				p.cancel()
				return &llm.Response{}, &llm.Error{Code: "ABORTED", Message: "cancelled", Err: ctx.Err()}
			}
			on(llm.Delta{Kind: llm.DeltaToolArgs, Index: i, Text: c.Arguments[j:min(j+3, len(c.Arguments))]})
		}
	}
	return p.resp, nil
}

// streamTurn runs one turn over p with a tool "slow" that cancels the
// turn when it runs (cancelAtRun) and a tool "note".
func streamTurn(t *testing.T, p *piecemeal, cancelAtRun bool) []session.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p.cancel = cancel
	reg := tools.NewRegistry()
	for _, name := range []string{"slow", "note"} {
		if err := reg.Register(tools.Tool{Name: name, Parameters: []byte(`{"type":"object"}`),
			Execute: func(ctx context.Context, ex *tools.Exec) (tools.Output, error) {
				if cancelAtRun && ex.Name == "slow" {
					cancel()
					<-ctx.Done()
					return tools.Output{}, errors.New("command aborted")
				}
				return tools.Output{Content: []tools.Content{tools.Text("ran")}}, nil
			}}); err != nil {
			t.Fatal(err)
		}
	}
	a := New(Config{Client: p, Tools: reg, MaxSteps: 1})
	var all []session.Event
	store := session.NewStore(func(ev session.Event) { all = append(all, ev) })
	a.Turn(ctx, NewSession(store, tools.NewSession("s", t.TempDir())), []tools.Content{tools.Text("hi")}, "")
	return all
}

// toolEvents lists the tool events as "type:id[:detail]".
func toolEvents(evs []session.Event) []string {
	var out []string
	for _, e := range evs {
		switch d := e.Data.(type) {
		case session.ToolStart:
			out = append(out, "start:"+d.CallID)
		case session.ToolInput:
			out = append(out, fmt.Sprintf("input:%s:%v:%s", d.CallID, d.Complete, d.Arguments))
		case session.ToolCall:
			out = append(out, "call:"+d.CallID+":"+d.Arguments)
		case session.ToolExec:
			out = append(out, "exec:"+d.CallID)
		case session.ToolResult:
			out = append(out, fmt.Sprintf("result:%s:cancelled=%v:notRun=%v", d.CallID, d.Cancelled, d.NotRun))
		default:
			// Only the call's steps are listed.
		}
	}
	return out
}

// TestStreamedArguments: while a call's arguments stream, the agent says
// each time a member completes (with the members so far) and once when
// the arguments are complete; a cancel while a call runs still logs the
// calls after it, as not run.
func TestStreamedArguments(t *testing.T) {
	resp := &llm.Response{FinishReason: "tool_calls", ToolCalls: []llm.ToolCall{
		{ID: "a", Name: "slow", Arguments: `{"file_path":"x.go","n":12}`},
		{ID: "b", Name: "note", Arguments: `{"text":"later"}`},
	}}
	got := strings.Join(toolEvents(streamTurn(t, &piecemeal{resp: resp}, true)), "\n")
	want := strings.Join([]string{
		"start:a",
		`input:a:false:{"file_path":"x.go"}`,
		`input:a:true:{"file_path":"x.go","n":12}`,
		"start:b",
		`input:b:false:{"text":"later"}`, // the string ends a piece before the brace
		`input:b:true:{"text":"later"}`,
		`call:a:{"file_path":"x.go","n":12}`,
		"exec:a",
		"result:a:cancelled=true:notRun=false",
		`call:b:{"text":"later"}`,
		"result:b:cancelled=true:notRun=true",
	}, "\n")
	if got != want {
		t.Errorf("events\n%s\nwant\n%s", got, want)
	}
}

// TestCutOffCallLogged: a call cut off mid-stream by a cancel is logged
// with the arguments streamed so far, then closed as not run, so a replay
// shows it as live did.
func TestCutOffCallLogged(t *testing.T) {
	resp := &llm.Response{ToolCalls: []llm.ToolCall{
		{ID: "a", Name: "note", Arguments: `{"text":"done"}`},
		{ID: "b", Name: "note", Arguments: `{"file_path":"half.txt","content":"abcdefgh"}`},
	}}
	evs := streamTurn(t, &piecemeal{resp: resp, cut: 10}, false)
	got := strings.Join(toolEvents(evs), "\n")
	want := strings.Join([]string{
		"start:a",
		`input:a:true:{"text":"done"}`,
		"start:b",
		`input:b:false:{"file_path":"half.txt"}`,
		`call:a:{"text":"done"}`,
		"result:a:cancelled=true:notRun=true",
		`call:b:{"file_path":"half.txt","conte`, // ten pieces of three bytes
		"result:b:cancelled=true:notRun=true",
	}, "\n")
	if got != want {
		t.Errorf("events\n%s\nwant\n%s", got, want)
	}
	// The assistant message of the cut answer has no calls: the model
	// never sees them.
	for _, e := range evs {
		if m, ok := e.Data.(session.AssistantMessage); ok && len(m.ToolCalls) > 0 {
			t.Errorf("cut answer logged with calls %+v", m.ToolCalls)
		}
	}
}
