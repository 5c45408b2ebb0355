package present

import (
	"context"
	"testing"

	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// streamArgs are the arguments of the streaming test tools.
type streamArgs struct {
	Path    string `json:"path"`
	Body    string `json:"body"`
	Command string `json:"command"`
	Cwd     string `json:"cwd"`
}

// streamTools: "open" (kind read) and "put" (a diff card, kind edit)
// show a card as soon as their path has streamed; "sh" is a terminal
// tool; "note" has no start card.
func streamTools() fakeLookup {
	spec := tools.Spec{
		{Name: "path", Prop: tools.Prop{Type: tools.TypeString, Required: true}},
		{Name: "body", Prop: tools.Prop{Type: tools.TypeString, Required: true}},
	}
	run := func(context.Context, *tools.Exec, streamArgs) (tools.Output, error) { return tools.Output{}, nil }
	open := tools.Define(tools.Def[streamArgs]{Name: "open", Spec: spec, Execute: run,
		PresentStart: func(a streamArgs) tools.ToolCallView {
			if a.Path == "" {
				return nil
			}
			return tools.GenericCall{Title: "Open " + a.Path, Kind: tools.KindRead, Locations: []tools.FileLocation{{Path: a.Path}}}
		},
		PresentCall: func(a streamArgs) tools.ToolCallView {
			return tools.GenericCall{Title: "Open " + a.Path, Kind: tools.KindRead, Locations: []tools.FileLocation{{Path: a.Path, Line: 3}},
				Content: []tools.Content{tools.Text(a.Body)}}
		},
		PresentResult: func(a streamArgs, r tools.ResultInput) tools.ToolResultView {
			return tools.GenericResult{Title: "Opened " + a.Path, Content: r.Content}
		}})
	putCard := func(a streamArgs) tools.ToolCallView {
		if a.Path == "" {
			return nil
		}
		return tools.DiffCall{Title: "Put " + a.Path, Locations: []tools.FileLocation{{Path: a.Path}}}
	}
	put := tools.Define(tools.Def[streamArgs]{Name: "put", Spec: spec, Execute: run, PresentStart: putCard, PresentCall: putCard})
	sh := tools.Define(tools.Def[streamArgs]{Name: "sh", Terminal: true, Execute: run,
		Spec:        tools.Spec{{Name: "command", Prop: tools.Prop{Type: tools.TypeString, Required: true}}, {Name: "cwd", Prop: tools.Prop{Type: tools.TypeString}}},
		PresentCall: func(a streamArgs) tools.ToolCallView { return tools.TerminalCall{Title: a.Command, Cwd: a.Cwd} },
		PresentResult: func(_ streamArgs, r tools.ResultInput) tools.ToolResultView {
			code := 0
			return tools.TerminalResult{Output: tools.JoinText(r.Content), ExitCode: &code}
		}})
	return fakeLookup{"open": open, "put": put, "sh": sh, "note": {Name: "note"}}
}

func input(id, members string) session.ToolInput {
	return session.ToolInput{CallID: id, Arguments: members}
}

func complete(id, args string) session.ToolInput {
	return session.ToolInput{CallID: id, Arguments: args, Complete: true}
}

func preview(id string, v tools.DiffCall) session.ToolPreview {
	return session.ToolPreview{CallID: id, Preview: v}
}

func strp(s string) *string { return &s }

var streamCases = []presentCase{
	{
		name: "a start card's location is cleared when the whole arguments give no card: a path given twice is refused, the first one streamed is not the call's",
		view: base, tools: streamTools(),
		steps: []step{
			{ev: start("d1", "open")},
			{ev: input("d1", `{"path":"a"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"d1","title":"Open a","name":"open","kind":"read","status":"pending","locations":[{"path":"/proj/a"}]}`}},
			{ev: input("d1", `{"path":"a","path":"b"}`)},
			{ev: complete("d1", `{"path":"a","body":"x","path":"b"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"d1","title":"open","kind":"other","locations":[],"rawInput":{"path":"a","body":"x","path":"b"}}`}},
			{ev: failed(result("d1", `Error: invalid arguments: duplicate key "path" in arguments`)), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"d1","status":"failed","rawOutput":"Error: invalid arguments: duplicate key \"path\" in arguments","content":[{"type":"content","content":{"type":"text","text":"Error: invalid arguments: duplicate key \"path\" in arguments"}}]}`}},
		},
	},
	{
		name: "a file card is announced when its path has streamed, with its kind, title and absolute location; one tool_call",
		view: base, tools: streamTools(),
		steps: []step{
			{ev: start("c1", "open")},
			{ev: input("c1", `{}`)},
			{ev: input("c1", `{"path":"src/__tests__/a_b_.js"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Open ` + "`src/__tests__/a_b_.js`" + `","name":"open","kind":"read","status":"pending","locations":[{"path":"/proj/src/__tests__/a_b_.js"}]}`}},
			{ev: input("c1", `{"path":"src/__tests__/a_b_.js","x":1}`)},
			{ev: complete("c1", `{"path":"src/__tests__/a_b_.js","body":"hi"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Open ` + "`src/__tests__/a_b_.js`" + `","kind":"read","locations":[{"path":"/proj/src/__tests__/a_b_.js","line":3}],"rawInput":{"path":"src/__tests__/a_b_.js","body":"hi"},"content":[` + "{\"type\":\"content\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}" + `]}`}},
			// The logged call with the same arguments adds nothing.
			{ev: call("c1", "open", `{"path":"src/__tests__/a_b_.js","body":"hi"}`)},
			{ev: exec("c1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}`}},
			{ev: result("c1", "done"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Opened ` + "`src/__tests__/a_b_.js`" + `","status":"completed","rawOutput":"done","content":[{"type":"content","content":{"type":"text","text":"done"}}]}`}},
		},
	},
	{
		name: "a terminal card is announced with its complete arguments, pending, with the terminal and the real cwd",
		view: live, tools: streamTools(),
		steps: []step{
			{ev: start("t1", "sh")},
			{ev: input("t1", `{"command":"make"}`)},
			{ev: complete("t1", `{"command":"make","cwd":"sub"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"make","name":"sh","kind":"execute","status":"pending","rawInput":{"command":"make","cwd":"sub"},"_meta":{"terminal_info":{"terminal_id":"t1","cwd":"/proj/sub"}},"content":[{"type":"terminal","terminalId":"t1"}]}`}},
			{ev: call("t1", "sh", `{"command":"make","cwd":"sub"}`)},
			// Cancelled before it ran: no signal was sent, none is claimed.
			{ev: notRun(cancelled(result("t1", "Error: cancelled by the user"))), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","rawOutput":{"exitCode":null,"signal":null,"cancelled":true},"_meta":{"terminal_output":{"terminal_id":"t1","data":"[cancelled by the user]\n"},"terminal_exit":{"terminal_id":"t1","exit_code":null,"signal":null}}}`}},
		},
	},
	{
		name: "cards follow the model's order: a call that starts announces the ones before it still waiting",
		view: base, tools: streamTools(),
		steps: []step{
			{ev: session.StepStart{Turn: 1, Step: 1}},
			{ev: start("c1", "open")},
			{ev: input("c1", `{"body":"x"}`)},
			{ev: start("c2", "note"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"open","name":"open","kind":"other","status":"pending"}`,
				`{"sessionUpdate":"tool_call","toolCallId":"c2","title":"note","name":"note","kind":"other","status":"pending"}`}},
			{ev: input("c1", `{"body":"x","path":"a"}`)},
			{ev: start("c3", "put")},
			{ev: input("c3", `{"path":"b"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c3","title":"Put b","name":"put","kind":"edit","status":"pending","locations":[{"path":"/proj/b"}]}`}},
			// A new step starts a new order.
			{ev: session.StepStart{Turn: 1, Step: 2}},
			{ev: start("c4", "note"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c4","title":"note","name":"note","kind":"other","status":"pending"}`}},
		},
	},
	{
		name: "a preview shows the real change at once; a failed call sets the call card's locations again",
		view: base, tools: streamTools(),
		steps: []step{
			{ev: call("c1", "put", `{"path":"a.txt","body":"new"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Put a.txt","name":"put","kind":"edit","status":"pending","locations":[{"path":"/proj/a.txt"}],"rawInput":{"path":"a.txt","body":"new"}}`}},
			{ev: preview("c1", tools.DiffCall{Title: "Put a.txt", Diffs: []tools.FileDiff{{Path: "/proj/a.txt", OldText: strp("old"), NewText: "new"}},
				Locations: []tools.FileLocation{{Path: "/proj/a.txt", Line: 4}, {Path: "/proj/a.txt", Line: 9}}}), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","locations":[{"path":"/proj/a.txt","line":4},{"path":"/proj/a.txt","line":9}],"content":[{"type":"diff","path":"/proj/a.txt","oldText":"old","newText":"new"}]}`}},
			{ev: failed(result("c1", "Error: refused")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","locations":[{"path":"/proj/a.txt"}],"rawOutput":"Error: refused","content":[{"type":"content","content":{"type":"text","text":"Error: refused"}}]}`}},
		},
	},
	{
		name: "a cancelled call after its preview falls back to its call card (replay has no preview)",
		view: base, tools: streamTools(),
		steps: []step{
			{ev: call("c1", "put", `{"path":"a.txt","body":"new"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Put a.txt","name":"put","kind":"edit","status":"pending","locations":[{"path":"/proj/a.txt"}],"rawInput":{"path":"a.txt","body":"new"}}`}},
			{ev: preview("c1", tools.DiffCall{Diffs: []tools.FileDiff{{Path: "/proj/a.txt", NewText: "new"}}}), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"diff","path":"/proj/a.txt","oldText":null,"newText":"new"}]}`}},
			{ev: notRun(cancelled(result("c1", "Error: cancelled by the user"))), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","locations":[{"path":"/proj/a.txt"}],"rawOutput":"Cancelled by the user.","content":[{"type":"content","content":{"type":"text","text":"Cancelled by the user."}}]}`}},
		},
	},
	{
		name: "a call cut off mid-stream is logged with what streamed: its start card, live and on replay",
		view: replay, tools: streamTools(),
		steps: []step{
			{ev: call("c1", "put", `{"path":"a.txt","body":"half`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Put a.txt","name":"put","kind":"edit","status":"pending","locations":[{"path":"/proj/a.txt"}],"rawInput":"{\"path\":\"a.txt\",\"body\":\"half"}`}},
			{ev: notRun(cancelled(result("c1", "Error: cancelled by the user"))), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","rawOutput":"Cancelled by the user.","content":[{"type":"content","content":{"type":"text","text":"Cancelled by the user."}}]}`}},
		},
	},
	{
		name: "titles: paths Markdown-safe in the kinds Zed renders as Markdown, edit and execute titles as they are",
		view: base,
		steps: []step{
			{ev: call("c1", "read", `{"path":"/proj/a*b_c.go","kind":"search"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read ` + "`a*b_c.go`" + `","name":"read","kind":"search","status":"pending","locations":[{"path":"/proj/a*b_c.go"}],"rawInput":{"path":"/proj/a*b_c.go","kind":"search"}}`}},
			{ev: call("c2", "read", `{"path":"/proj/plain/a.go"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c2","title":"Read plain/a.go","name":"read","kind":"other","status":"pending","locations":[{"path":"/proj/plain/a.go"}],"rawInput":{"path":"/proj/plain/a.go"}}`}},
			{ev: call("c3", "edit", `{"path":"/proj/__init__.py","new":"x"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c3","title":"Edit __init__.py","name":"edit","kind":"edit","status":"pending","rawInput":{"path":"/proj/__init__.py","new":"x"},"content":[{"type":"diff","path":"/proj/__init__.py","oldText":null,"newText":"x"}]}`}},
			{ev: call("c4", "read", "{\"path\":\"/proj/a`b\",\"title\":\"Read /proj/a`b\"}"), want: []string{
				"{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"c4\",\"title\":\"Read ``a`b``\",\"name\":\"read\",\"kind\":\"other\",\"status\":\"pending\",\"locations\":[{\"path\":\"/proj/a`b\"}],\"rawInput\":{\"path\":\"/proj/a`b\",\"title\":\"Read /proj/a`b\"}}"}},
			// A title whose tool made the path safe already is not wrapped twice.
			{ev: call("c5", "read", "{\"path\":\"/x/a_b\",\"title\":\"Read `/x/a_b`\"}"), want: []string{
				"{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"c5\",\"title\":\"Read `/x/a_b`\",\"name\":\"read\",\"kind\":\"other\",\"status\":\"pending\",\"locations\":[{\"path\":\"/x/a_b\"}],\"rawInput\":{\"path\":\"/x/a_b\",\"title\":\"Read `/x/a_b`\"}}"}},
		},
	},
}

func TestStreamingCards(t *testing.T) {
	for _, c := range streamCases {
		t.Run(c.name, func(t *testing.T) { checkCase(t, c) })
	}
}
