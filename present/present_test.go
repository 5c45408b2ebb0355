package present

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// fakeLookup is a ToolLookup over a fixed map.
type fakeLookup map[string]tools.Tool

func (l fakeLookup) Get(name string) (tools.Tool, bool) {
	t, ok := l[name]
	return t, ok
}

// fakeArgs is the union of the arguments the fake tools read. The
// presenters are pure functions of these (and of the result).
type fakeArgs struct {
	Path        string  `json:"path"`
	Line        int     `json:"line"`
	Title       string  `json:"title"`
	ResultTitle string  `json:"resultTitle"`
	Kind        string  `json:"kind"`
	Preview     string  `json:"preview"`
	Bare        bool    `json:"bare"`
	Old         *string `json:"old"`
	New         string  `json:"new"`
	NoDiffs     bool    `json:"nodiffs"`
	Loc         bool    `json:"loc"`
	Note        string  `json:"note"`
	Command     string  `json:"command"`
	Description string  `json:"description"`
	Cwd         string  `json:"cwd"`
}

func parseArgs(raw json.RawMessage) fakeArgs {
	var a fakeArgs
	_ = json.Unmarshal(raw, &a) // presenters are total: bad JSON gives zero args
	return a
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// fakeTools returns the tools the table uses:
//   - read: generic cards (kind, locations, optional preview text plus an
//     image block without data, shown as its text form; "bare" makes an
//     empty result card);
//   - edit: diff cards (nil oldText unless "old" is given; "nodiffs" empties
//     the list; "loc" adds a location; nil result card on errors);
//   - bash: a terminal tool (nil call card without a command; the result's
//     Meta {"exit":N} or {"signal":S} gives the exit, and "notes" the
//     notes; nil result card for an error without Meta);
//   - plain: no presenters; boom: presenters that panic;
//   - fake_term: a non-terminal tool whose presenters return terminal cards.
func fakeTools() fakeLookup {
	locs := func(a fakeArgs) []tools.FileLocation {
		if a.Path == "" {
			return nil
		}
		return []tools.FileLocation{{Path: a.Path, Line: a.Line}}
	}
	diffs := func(a fakeArgs) []tools.FileDiff {
		if a.NoDiffs {
			return nil
		}
		return []tools.FileDiff{{Path: a.Path, OldText: a.Old, NewText: a.New}}
	}
	return fakeLookup{
		"read": {
			Name: "read",
			PresentCall: func(raw json.RawMessage) tools.ToolCallView {
				a := parseArgs(raw)
				v := tools.GenericCall{Title: orDefault(a.Title, "Read "+a.Path), Kind: tools.Kind(a.Kind), Locations: locs(a)}
				if a.Preview != "" {
					v.Content = []tools.Content{tools.Text(a.Preview), {Type: "image"}}
				}
				return v
			},
			PresentResult: func(raw json.RawMessage, r tools.ResultInput) tools.ToolResultView {
				a := parseArgs(raw)
				if a.Bare {
					return tools.GenericResult{}
				}
				v := tools.GenericResult{Content: r.Content, Locations: locs(a)}
				if a.Path != "" {
					v.Title = orDefault(a.ResultTitle, "Read "+a.Path+" (done)")
				}
				return v
			},
		},
		"edit": {
			Name: "edit",
			PresentCall: func(raw json.RawMessage) tools.ToolCallView {
				a := parseArgs(raw)
				v := tools.DiffCall{Title: "Edit " + a.Path, Diffs: diffs(a)}
				if a.Loc {
					v.Locations = locs(a)
				}
				return v
			},
			PresentResult: func(raw json.RawMessage, r tools.ResultInput) tools.ToolResultView {
				if r.IsError {
					return nil
				}
				a := parseArgs(raw)
				v := tools.DiffResult{Title: "Edited " + a.Path, Diffs: diffs(a), Note: a.Note}
				if a.Loc {
					v.Locations = locs(a)
				}
				return v
			},
		},
		"bash": {
			Name:     "bash",
			Terminal: true,
			PresentCall: func(raw json.RawMessage) tools.ToolCallView {
				a := parseArgs(raw)
				if a.Command == "" {
					return nil
				}
				return tools.TerminalCall{Title: a.Command, Description: a.Description, Cwd: a.Cwd}
			},
			PresentResult: func(_ json.RawMessage, r tools.ResultInput) tools.ToolResultView {
				if r.IsError && len(r.Meta) == 0 {
					return nil
				}
				var m struct {
					Exit   *int   `json:"exit"`
					Signal string `json:"signal"`
					Notes  string `json:"notes"`
				}
				_ = json.Unmarshal(r.Meta, &m)
				var out strings.Builder
				for _, c := range r.Content {
					out.WriteString(c.Text)
				}
				return tools.TerminalResult{Output: out.String(), Notes: m.Notes, ExitCode: m.Exit, Signal: m.Signal}
			},
		},
		"plain": {Name: "plain"},
		"boom": {
			Name:          "boom",
			PresentCall:   func(json.RawMessage) tools.ToolCallView { panic("call card") },
			PresentResult: func(json.RawMessage, tools.ResultInput) tools.ToolResultView { panic("result card") },
		},
		"fake_term": {
			Name: "fake_term",
			PresentCall: func(raw json.RawMessage) tools.ToolCallView {
				a := parseArgs(raw)
				return tools.TerminalCall{Title: a.Command, Description: a.Description}
			},
			PresentResult: func(json.RawMessage, tools.ResultInput) tools.ToolResultView {
				code := 0
				return tools.TerminalResult{Output: "presented output", ExitCode: &code}
			},
		},
	}
}

// Event shorthands.
func start(id, name string) session.ToolStart { return session.ToolStart{CallID: id, Name: name} }
func call(id, name, args string) session.ToolCall {
	return session.ToolCall{CallID: id, Name: name, Arguments: args}
}
func exec(id string) session.ToolExec { return session.ToolExec{CallID: id} }
func prog(id, out string) session.ToolProgress {
	return session.ToolProgress{CallID: id, Progress: tools.Progress{Output: out}}
}
func result(id string, text ...string) session.ToolResult {
	r := session.ToolResult{CallID: id, Content: []tools.Content{}}
	for _, s := range text {
		r.Content = append(r.Content, tools.Text(s))
	}
	return r
}

// note is a progress event carrying a tool's note.
func note(id, line string) session.ToolProgress {
	return session.ToolProgress{CallID: id, Progress: tools.Progress{Note: line}}
}

func withMeta(r session.ToolResult, meta string) session.ToolResult {
	r.Meta = json.RawMessage(meta)
	return r
}
func failed(r session.ToolResult) session.ToolResult { r.IsError = true; return r }
func notRun(r session.ToolResult) session.ToolResult { r.NotRun = true; return r }
func cancelled(r session.ToolResult) session.ToolResult {
	r.IsError, r.Cancelled = true, true
	return r
}

// textItem is the JSON of a {"type":"content"} text item holding s.
func textItem(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return `{"type":"content","content":{"type":"text","text":` + string(b) + `}}`
}

// jsonStr is s as a JSON string literal.
func jsonStr(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// step is one event given to the presenter and the exact JSON of every
// update it must give, in order (none: nil).
type step struct {
	ev   session.Data
	want []string
}

// presentCase is one session's events through one Presenter.
type presentCase struct {
	name  string
	view  View
	steps []step
	bug   string     // set: the row shows a known bug and is skipped
	tools fakeLookup // nil: fakeTools()
}

var (
	base     = View{Cwd: "/proj", LineBase: 1}
	zed      = View{Cwd: "/proj", LineBase: 0}
	live     = View{Cwd: "/proj", LineBase: 1, TerminalOutput: true}
	replay   = View{Cwd: "/proj", LineBase: 1, Replay: true}
	replayTO = View{Cwd: "/proj", LineBase: 1, Replay: true, TerminalOutput: true}
)

// jsonEsc is s escaped as inside a JSON string.
func jsonEsc(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// runCase feeds the steps to a fresh presenter and returns, per step, the
// JSON of each update.
func runCase(t *testing.T, c presentCase) [][]string {
	t.Helper()
	lookup := c.tools
	if lookup == nil {
		lookup = fakeTools()
	}
	p := NewPresenter(c.view, lookup)
	out := make([][]string, len(c.steps))
	for i, s := range c.steps {
		for _, u := range p.Updates(session.Event{Seq: int64(i), Data: s.ev}) {
			b, err := acp.MarshalUpdate(u)
			if err != nil {
				t.Fatalf("step %d (%s): marshal: %v", i, s.ev.EventType(), err)
			}
			out[i] = append(out[i], string(b))
		}
	}
	return out
}

func checkCase(t *testing.T, c presentCase) {
	t.Helper()
	got := runCase(t, c)
	var diffs []string
	for i, s := range c.steps {
		if strings.Join(got[i], "\n") != strings.Join(s.want, "\n") {
			diffs = append(diffs, fmt.Sprintf("step %d (%s):\n got: %s\nwant: %s", i, s.ev.EventType(),
				strings.Join(got[i], "\n      "), strings.Join(s.want, "\n      ")))
		}
	}
	switch {
	case c.bug != "" && len(diffs) > 0:
		t.Skip("BUG: " + c.bug + "\n" + strings.Join(diffs, "\n"))
	case c.bug != "":
		t.Errorf("the row is marked %q but passes: drop the mark", c.bug)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}

// The exact update sequences of the issue, row by row.
var presentCases = []presentCase{
	{
		name: "generic: start, call, exec, result",
		view: base,
		steps: []step{
			{ev: start("c1", "read"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"read","name":"read","kind":"other","status":"pending"}`}},
			{ev: call("c1", "read", `{"path":"/proj/src/a.go","line":5,"kind":"read","preview":"package a"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read src/a.go","kind":"read","locations":[{"path":"/proj/src/a.go","line":5}],"rawInput":{"path":"/proj/src/a.go","line":5,"kind":"read","preview":"package a"},"content":[` + textItem("package a") + `,` + textItem("[image: unknown type, 0 bytes]") + `]}`}},
			{ev: exec("c1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}`}},
			{ev: result("c1", "1: hello\n", "2: world"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read src/a.go (done)","status":"completed","locations":[{"path":"/proj/src/a.go","line":5}],"rawOutput":"1: hello\n2: world","content":[` + textItem("1: hello\n") + `,` + textItem("2: world") + `]}`}},
			// The call is closed: later events for it show nothing.
			{ev: exec("c1")},
			{ev: result("c1", "again")},
		},
	},
	{
		name: "generic: error result fails, kind defaults to other, no content key without call content",
		view: base,
		steps: []step{
			{ev: start("c1", "read"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"read","name":"read","kind":"other","status":"pending"}`}},
			{ev: call("c1", "read", `{"path":"/etc/passwd"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read /etc/passwd","kind":"other","locations":[{"path":"/etc/passwd"}],"rawInput":{"path":"/etc/passwd"}}`}},
			{ev: failed(result("c1", "Error: permission denied")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read /etc/passwd (done)","status":"failed","locations":[{"path":"/etc/passwd"}],"rawOutput":"Error: permission denied","content":[` + textItem("Error: permission denied") + `]}`}},
		},
	},
	{
		name: "generic: result without content gets the raw tool text",
		view: base,
		steps: []step{
			{ev: call("c1", "read", `{"bare":true}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read ","name":"read","kind":"other","status":"pending","rawInput":{"bare":true}}`}},
			{ev: result("c1", "raw text"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":"raw text","content":[` + textItem("raw text") + `]}`}},
		},
	},
	{
		name: "generic: an image block without data shows its text form",
		view: base,
		steps: []step{
			{ev: call("c1", "read", `{"path":"/proj/img.png"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read img.png","name":"read","kind":"other","status":"pending","locations":[{"path":"/proj/img.png"}],"rawInput":{"path":"/proj/img.png"}}`}},
			{ev: session.ToolResult{CallID: "c1", Content: []tools.Content{{Type: "image"}}}, want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read img.png (done)","status":"completed","locations":[{"path":"/proj/img.png"}],"rawOutput":"","content":[` + textItem("[image: unknown type, 0 bytes]") + `]}`}},
		},
	},
	{
		name: "generic: empty result content and an empty result card give content []",
		view: base,
		steps: []step{
			{ev: call("c1", "read", `{"bare":true}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read ","name":"read","kind":"other","status":"pending","rawInput":{"bare":true}}`}},
			{ev: result("c1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":"","content":[]}`}},
		},
	},
	{
		name: "fallback: a tool without presenters",
		view: base,
		steps: []step{
			{ev: start("c1", "plain"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"plain","name":"plain","kind":"other","status":"pending"}`}},
			{ev: call("c1", "plain", ""), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"plain","kind":"other","rawInput":{}}`}},
			{ev: exec("c1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}`}},
			{ev: result("c1", "done"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":"done","content":[` + textItem("done") + `]}`}},
		},
	},
	{
		name: "fallback: panicking presenters",
		view: live,
		steps: []step{
			{ev: start("c1", "boom"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"boom","name":"boom","kind":"other","status":"pending"}`}},
			{ev: call("c1", "boom", ` { "x" : 1 } `), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"boom","kind":"other","rawInput":{"x":1}}`}},
			{ev: failed(result("c1", "Error: broke")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","rawOutput":"Error: broke","content":[` + textItem("Error: broke") + `]}`}},
		},
	},
	{
		name: "fallback: unknown tool, invalid JSON arguments",
		view: base,
		steps: []step{
			{ev: call("c1", "nope", `{"x":`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"nope","name":"nope","kind":"other","status":"pending","rawInput":"{\"x\":"}`}},
			{ev: failed(result("c1", `Error: unknown tool "nope"`)), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","rawOutput":"Error: unknown tool \"nope\"","content":[` + textItem(`Error: unknown tool "nope"`) + `]}`}},
		},
	},
	{
		name: "orphan guard: a terminal result for a non-terminal call is generic",
		view: live,
		steps: []step{
			{ev: start("c1", "fake_term"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"` + "`fake_term`" + `","name":"fake_term","kind":"other","status":"pending"}`}},
			{ev: call("c1", "fake_term", `{"command":"ls -la","description":"List"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"ls -la","kind":"execute","rawInput":{"command":"ls -la","description":"List"},"content":[` + textItem("List") + `]}`}},
			{ev: exec("c1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}`}},
			{ev: prog("c1", "not a terminal\n")},
			{ev: result("c1", "total 0"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":"total 0","content":[` + textItem("total 0") + `]}`}},
		},
	},
	{
		name: "orphan guard: a terminal call card without description has no content",
		view: base,
		steps: []step{
			{ev: call("c1", "fake_term", `{"command":"ls"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"ls","name":"fake_term","kind":"execute","status":"pending","rawInput":{"command":"ls"}}`}},
		},
	},
	{
		name: "orphan guard: a terminal tool whose call card falls back",
		view: live,
		steps: []step{
			{ev: start("t1", "bash")},
			{ev: call("t1", "bash", `{"description":"no command"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"bash","name":"bash","kind":"other","status":"pending","rawInput":{"description":"no command"}}`}},
			{ev: exec("t1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress"}`}},
			{ev: prog("t1", "ignored\n")},
			{ev: failed(result("t1", "Error: missing command")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","rawOutput":"Error: missing command","content":[` + textItem("Error: missing command") + `]}`}},
		},
	},
	{
		name: "titles: one line, cut at the first line break",
		view: base,
		steps: []step{
			{ev: call("c1", "read", `{"title":"Read a  \r\nsecond","path":"/proj/a","resultTitle":"Read /proj/a\nmore"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read a…","name":"read","kind":"other","status":"pending","locations":[{"path":"/proj/a"}],"rawInput":{"title":"Read a  \r\nsecond","path":"/proj/a","resultTitle":"Read /proj/a\nmore"}}`}},
			{ev: result("c1", "x"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read a…","status":"completed","locations":[{"path":"/proj/a"}],"rawOutput":"x","content":[` + textItem("x") + `]}`}},
			{ev: call("c2", "read", `{"title":"\nhidden"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c2","title":"…","name":"read","kind":"other","status":"pending","rawInput":{"title":"\nhidden"}}`}},
		},
	},
	{
		name: "diff: start, call, exec, result; title relativized off diffs[0].path; no locations",
		view: base,
		steps: []step{
			{ev: start("c1", "edit"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"edit","name":"edit","kind":"other","status":"pending"}`}},
			{ev: call("c1", "edit", `{"path":"/proj/cfg.txt","old":"a","new":"b"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Edit cfg.txt","kind":"edit","rawInput":{"path":"/proj/cfg.txt","old":"a","new":"b"},"content":[{"type":"diff","path":"/proj/cfg.txt","oldText":"a","newText":"b"}]}`}},
			{ev: exec("c1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}`}},
			{ev: result("c1", "updated"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Edited cfg.txt","status":"completed","rawOutput":"updated","content":[{"type":"diff","path":"/proj/cfg.txt","oldText":"a","newText":"b"}]}`}},
		},
	},
	{
		name: "diff: new file at a relative path, locations, note; zed rows",
		view: zed,
		steps: []step{
			{ev: call("c1", "edit", `{"path":"new.txt","new":"hi","loc":true,"line":1,"note":"1 hunk left out"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit new.txt","name":"edit","kind":"edit","status":"pending","locations":[{"path":"/proj/new.txt","line":0}],"rawInput":{"path":"new.txt","new":"hi","loc":true,"line":1,"note":"1 hunk left out"},"content":[{"type":"diff","path":"/proj/new.txt","oldText":null,"newText":"hi"}]}`}},
			{ev: result("c1", "created"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Edited new.txt","status":"completed","locations":[{"path":"/proj/new.txt","line":0}],"rawOutput":"created","content":[{"type":"diff","path":"/proj/new.txt","oldText":null,"newText":"hi"},` + textItem("1 hunk left out") + `]}`}},
		},
	},
	{
		name: "diff: empty diffs omit content on the call, the result shows the raw text",
		view: base,
		steps: []step{
			{ev: call("c1", "edit", `{"path":"/proj/x","nodiffs":true}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit /proj/x","name":"edit","kind":"edit","status":"pending","rawInput":{"path":"/proj/x","nodiffs":true}}`}},
			{ev: result("c1", "no change"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Edited /proj/x","status":"completed","rawOutput":"no change","content":[` + textItem("no change") + `]}`}},
		},
	},
	{
		name: "diff: empty diffs with a note show the note",
		view: base,
		steps: []step{
			{ev: call("c1", "edit", `{"path":"/proj/x","nodiffs":true,"note":"nothing to apply"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit /proj/x","name":"edit","kind":"edit","status":"pending","rawInput":{"path":"/proj/x","nodiffs":true,"note":"nothing to apply"}}`}},
			{ev: result("c1", "no change"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Edited /proj/x","status":"completed","rawOutput":"no change","content":[` + textItem("nothing to apply") + `]}`}},
		},
	},
	{
		name: "diff: an error result with no result card shows the raw text",
		view: base,
		steps: []step{
			{ev: call("c1", "edit", `{"path":"/proj/a","old":"x","new":"y"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit a","name":"edit","kind":"edit","status":"pending","rawInput":{"path":"/proj/a","old":"x","new":"y"},"content":[{"type":"diff","path":"/proj/a","oldText":"x","newText":"y"}]}`}},
			{ev: failed(result("c1", "Error: stale")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","rawOutput":"Error: stale","content":[` + textItem("Error: stale") + `]}`}},
		},
	},
	{
		name: "two calls streamed together keep their own state",
		view: base,
		steps: []step{
			{ev: start("c1", "read"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"read","name":"read","kind":"other","status":"pending"}`}},
			{ev: start("c2", "edit"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c2","title":"edit","name":"edit","kind":"other","status":"pending"}`}},
			{ev: call("c1", "read", `{"path":"a"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read a","kind":"other","locations":[{"path":"/proj/a"}],"rawInput":{"path":"a"}}`}},
			{ev: exec("c1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}`}},
			{ev: result("c1", "A"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read a (done)","status":"completed","locations":[{"path":"/proj/a"}],"rawOutput":"A","content":[` + textItem("A") + `]}`}},
			{ev: call("c2", "edit", `{"path":"b","old":"1","new":"2"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c2","title":"Edit b","kind":"edit","rawInput":{"path":"b","old":"1","new":"2"},"content":[{"type":"diff","path":"/proj/b","oldText":"1","newText":"2"}]}`}},
			{ev: exec("c2"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c2","status":"in_progress"}`}},
			{ev: result("c2", "ok"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c2","title":"Edited b","status":"completed","rawOutput":"ok","content":[{"type":"diff","path":"/proj/b","oldText":"1","newText":"2"}]}`}},
		},
	},
	{
		name: "events for unknown calls show nothing",
		view: live,
		steps: []step{
			{ev: exec("x")},
			{ev: prog("x", "out")},
			{ev: result("x", "out")},
			{ev: cancelled(result("x", "out"))},
		},
	},
	{
		name: "terminal with capability: live output, exit code",
		view: live,
		steps: []step{
			{ev: start("t1", "bash")},
			{ev: call("t1", "bash", `{"command":"go test ./...\necho done","description":"Run the tests"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"go test ./...\necho done","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"go test ./...\necho done","description":"Run the tests"},"_meta":{"terminal_info":{"terminal_id":"t1","cwd":"/proj"}},"content":[` + textItem("Run the tests") + `,{"type":"terminal","terminalId":"t1"}]}`}},
			{ev: exec("t1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress"}`}},
			{ev: prog("t1", "ok 1\n"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","_meta":{"terminal_output":{"terminal_id":"t1","data":"ok 1\n"}}}`}},
			{ev: session.ToolProgress{CallID: "t1", Progress: tools.Progress{Plan: []tools.PlanEntry{{Content: "x", Status: "pending"}}}}},
			{ev: prog("t1", "FAIL 2\n"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","_meta":{"terminal_output":{"terminal_id":"t1","data":"FAIL 2\n"}}}`}},
			{ev: withMeta(result("t1", "ok 1\nFAIL 2\n"), `{"exit":1}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"exitCode":1,"signal":null},"_meta":{"terminal_output":{"terminal_id":"t1","data":""},"terminal_exit":{"terminal_id":"t1","exit_code":1,"signal":null}},"content":[{"type":"content","content":{"type":"text","text":"Run the tests"}},{"type":"terminal","terminalId":"t1"},{"type":"content","content":{"type":"text","text":"[exit code: 1]"}}]}`}},
		},
	},
	{
		name: "terminal with capability: no live output, a signal, an error",
		view: live,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"sleep 9","description":"Wait","cwd":"sub"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"sleep 9","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"sleep 9","description":"Wait","cwd":"sub"},"_meta":{"terminal_info":{"terminal_id":"t1","cwd":"/proj/sub"}},"content":[` + textItem("Wait") + `,{"type":"terminal","terminalId":"t1"}]}`}},
			{ev: withMeta(failed(result("t1", "partial")), `{"signal":"SIGKILL"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","rawOutput":{"exitCode":null,"signal":"SIGKILL"},"_meta":{"terminal_output":{"terminal_id":"t1","data":"partial"},"terminal_exit":{"terminal_id":"t1","exit_code":null,"signal":"SIGKILL"}},"content":[{"type":"content","content":{"type":"text","text":"Wait"}},{"type":"terminal","terminalId":"t1"},{"type":"content","content":{"type":"text","text":"[killed by signal: SIGKILL]"}}]}`}},
		},
	},
	{
		name: "terminal with capability: no description, absolute cwd, empty output, unknown exit",
		view: live,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"true","cwd":"/abs/dir"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"true","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"true","cwd":"/abs/dir"},"_meta":{"terminal_info":{"terminal_id":"t1","cwd":"/abs/dir"}},"content":[{"type":"terminal","terminalId":"t1"}]}`}},
			{ev: result("t1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"exitCode":null,"signal":null},"_meta":{"terminal_output":{"terminal_id":"t1","data":""},"terminal_exit":{"terminal_id":"t1","exit_code":null,"signal":null}}}`}},
		},
	},
	{
		name: "terminal with capability: no session cwd keeps a relative cwd raw",
		view: View{LineBase: 1, TerminalOutput: true},
		steps: []step{
			{ev: call("t1", "bash", `{"command":"ls","cwd":"sub"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"ls","cwd":"sub"},"_meta":{"terminal_info":{"terminal_id":"t1","cwd":"sub"}},"content":[{"type":"terminal","terminalId":"t1"}]}`}},
			{ev: call("t2", "bash", `{"command":"ls"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"ls","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"ls"},"_meta":{"terminal_info":{"terminal_id":"t2"}},"content":[{"type":"terminal","terminalId":"t2"}]}`}},
		},
	},
	{
		name: "terminal: an error result without a result card shows the raw text",
		view: live,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"nosuch"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"nosuch","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"nosuch"},"_meta":{"terminal_info":{"terminal_id":"t1","cwd":"/proj"}},"content":[{"type":"terminal","terminalId":"t1"}]}`}},
			{ev: failed(result("t1", "Error: spawn failed")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","rawOutput":{"exitCode":null,"signal":null,"error":"Error: spawn failed"},"_meta":{"terminal_output":{"terminal_id":"t1","data":"Error: spawn failed"},"terminal_exit":{"terminal_id":"t1","exit_code":null,"signal":null}}}`}},
			{ev: call("t2", "bash", `{"command":"nosuch"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"nosuch","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"nosuch"},"_meta":{"terminal_info":{"terminal_id":"t2","cwd":"/proj"}},"content":[{"type":"terminal","terminalId":"t2"}]}`}},
			{ev: prog("t2", "sh: nosuch: not found\n"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t2","_meta":{"terminal_output":{"terminal_id":"t2","data":"sh: nosuch: not found\n"}}}`}},
			{ev: withMeta(failed(result("t2", "sh: nosuch: not found\n")), `{"exit":127}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"failed","rawOutput":{"exitCode":127,"signal":null},"_meta":{"terminal_output":{"terminal_id":"t2","data":""},"terminal_exit":{"terminal_id":"t2","exit_code":127,"signal":null}},"content":[{"type":"terminal","terminalId":"t2"},{"type":"content","content":{"type":"text","text":"[exit code: 127]"}}]}`}},
		},
	},
	{
		name: "terminal without capability: an error result without a result card is fenced",
		view: base,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"nosuch","description":"Try"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"nosuch","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"nosuch","description":"Try"},"content":[` + textItem("Try") + `]}`}},
			{ev: failed(result("t1", "Error: spawn failed")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","rawOutput":{"exitCode":null,"signal":null,"error":"Error: spawn failed"},"content":[` + textItem("Try") + `,` + textItem("```console\nError: spawn failed\n```") + `]}`}},
		},
	},
	{
		name: "terminal without capability: a snapshot with every report, fenced final output and notes",
		view: base,
		steps: []step{
			{ev: start("t1", "bash")},
			{ev: call("t1", "bash", `{"command":"make","description":"Build"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"make","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"make","description":"Build"},"content":[` + textItem("Build") + `]}`}},
			{ev: exec("t1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress"}`}},
			{ev: prog("t1", "a\n"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[` + textItem("Build") + `,` + textItem("```console\na\n```") + `]}`}},
			{ev: prog("t1", "b\n"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[` + textItem("Build") + `,` + textItem("```console\na\nb\n```") + `]}`}},
			{ev: note("t1", "[timed out after 5ms]"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[` + textItem("Build") + `,` + textItem("```console\na\nb\n```") + `,` + textItem("[timed out after 5ms]") + `]}`}},
			// The final update shows the result's output and notes.
			{ev: withMeta(result("t1", "a\nb\nc\n\n"), `{"exit":2,"notes":"[exit code: 2]"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"exitCode":2,"signal":null},"content":[` + textItem("Build") + `,` + textItem("```console\na\nb\nc\n```") + `,` + textItem("[exit code: 2]") + `]}`}},
		},
	},
	{
		name: "terminal without capability: a silent command ends with its notes only, clearing the snapshot when there is nothing",
		view: base,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"true"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"true","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"true"}}`}},
			{ev: withMeta(result("t1", ""), `{"exit":0,"notes":"(no output)"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"exitCode":0,"signal":null},"content":[` + textItem("(no output)") + `]}`}},
			{ev: call("t2", "bash", `{"command":"true"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"true","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"true"}}`}},
			{ev: prog("t2", "\n"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t2"}`}},
			{ev: withMeta(result("t2", "\n"), `{"exit":0}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"completed","rawOutput":{"exitCode":0,"signal":null},"content":[]}`}},
		},
	},
	{
		name: "terminal with capability: notes on lines of their own, repeated in the content; no exit in the output",
		view: live,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"seq 1 9","description":"Count"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"seq 1 9","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"seq 1 9","description":"Count"},"_meta":{"terminal_info":{"terminal_id":"t1","cwd":"/proj"}},"content":[` + textItem("Count") + `,{"type":"terminal","terminalId":"t1"}]}`}},
			{ev: prog("t1", "1\n2"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","_meta":{"terminal_output":{"terminal_id":"t1","data":"1\n2"}}}`}},
			{ev: note("t1", "[output truncated; 4 bytes left out here]"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","_meta":{"terminal_output":{"terminal_id":"t1","data":"\n[output truncated; 4 bytes left out here]\n"}}}`}},
			{ev: prog("t1", "9\n"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","_meta":{"terminal_output":{"terminal_id":"t1","data":"9\n"}}}`}},
			{ev: withMeta(result("t1", "1\n2\n9\n"), `{"exit":1,"notes":"[exit code: 1]"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"exitCode":1,"signal":null},"_meta":{"terminal_output":{"terminal_id":"t1","data":""},"terminal_exit":{"terminal_id":"t1","exit_code":1,"signal":null}},"content":[` + textItem("Count") + `,{"type":"terminal","terminalId":"t1"},` + textItem("[output truncated; 4 bytes left out here]\n[exit code: 1]") + `]}`}},
			// Nothing streamed (a replay): the result's output, without
			// its notes.
			{ev: call("t2", "bash", `{"command":"false"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"false","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"false"},"_meta":{"terminal_info":{"terminal_id":"t2","cwd":"/proj"}},"content":[{"type":"terminal","terminalId":"t2"}]}`}},
			{ev: withMeta(result("t2", ""), `{"exit":1,"notes":"(no output)\n[exit code: 1]"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"completed","rawOutput":{"exitCode":1,"signal":null},"_meta":{"terminal_output":{"terminal_id":"t2","data":""},"terminal_exit":{"terminal_id":"t2","exit_code":1,"signal":null}},"content":[{"type":"terminal","terminalId":"t2"},{"type":"content","content":{"type":"text","text":"[exit code: 1]"}}]}`}},
		},
	},
	{
		name: "multi-line command: whole in a live terminal's title, one line plus a sh fence otherwise",
		view: live,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"git status\nrm -f x.txt","description":"Clean"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"git status\nrm -f x.txt","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"git status\nrm -f x.txt","description":"Clean"},"_meta":{"terminal_info":{"terminal_id":"t1","cwd":"/proj"}},"content":[` + textItem("Clean") + `,{"type":"terminal","terminalId":"t1"}]}`}},
			{ev: call("t2", "fake_term", `{"command":"git status\nrm -f x.txt","description":"Clean"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"git status…","name":"fake_term","kind":"execute","status":"pending","rawInput":{"command":"git status\nrm -f x.txt","description":"Clean"},"content":[` + textItem("Clean") + `,` + textItem("```sh\ngit status\nrm -f x.txt\n```") + `]}`}},
		},
	},
	{
		name: "multi-line command without a live terminal: the fence stays in every snapshot",
		view: base,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"git status\nrm -f x.txt"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"git status…","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"git status\nrm -f x.txt"},"content":[` + textItem("```sh\ngit status\nrm -f x.txt\n```") + `]}`}},
			{ev: prog("t1", "clean\n"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[` + textItem("```sh\ngit status\nrm -f x.txt\n```") + `,` + textItem("```console\nclean\n```") + `]}`}},
			{ev: withMeta(result("t1", "clean\n"), `{"exit":0}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"exitCode":0,"signal":null},"content":[` + textItem("```sh\ngit status\nrm -f x.txt\n```") + `,` + textItem("```console\nclean\n```") + `]}`}},
		},
	},
	{
		name: "terminal without capability: no description, fence longer than the backticks inside",
		view: base,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"cat README.md"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"cat README.md","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"cat README.md"}}`}},
			{ev: prog("t1", "`` and ```go\n"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[` + textItem("````console\n`` and ```go\n````") + `]}`}},
			{ev: withMeta(result("t1", "`` and ```go\n`````\n"), `{"exit":0}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"exitCode":0,"signal":null},"content":[` + textItem("``````console\n`` and ```go\n`````\n``````") + `]}`}},
			{ev: call("t2", "bash", `{"command":"echo"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"echo","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"echo"}}`}},
			{ev: withMeta(result("t2", "a `` b"), `{"exit":0}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"completed","rawOutput":{"exitCode":0,"signal":null},"content":[` + textItem("```console\na `` b\n```") + `]}`}},
		},
	},
	{
		name: "cancelled: generic card keeps its content and appends the notice",
		view: base,
		steps: []step{
			{ev: start("c1", "read"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"read","name":"read","kind":"other","status":"pending"}`}},
			{ev: call("c1", "read", `{"path":"/proj/a","preview":"head"}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read a","kind":"other","locations":[{"path":"/proj/a"}],"rawInput":{"path":"/proj/a","preview":"head"},"content":[` + textItem("head") + `,` + textItem("[image: unknown type, 0 bytes]") + `]}`}},
			{ev: exec("c1"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}`}},
			{ev: cancelled(result("c1", "Error: cancelled by the user")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","rawOutput":"Cancelled by the user.","content":[` + textItem("head") + `,` + textItem("[image: unknown type, 0 bytes]") + `,` + textItem("Cancelled by the user.") + `]}`}},
		},
	},
	{
		name: "cancelled: a call whose arguments never completed, and a diff card",
		view: base,
		steps: []step{
			{ev: start("c1", "plain"), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"plain","name":"plain","kind":"other","status":"pending"}`}},
			{ev: cancelled(result("c1", "Error: cancelled by the user")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","rawOutput":"Cancelled by the user.","content":[` + textItem("Cancelled by the user.") + `]}`}},
			{ev: call("c2", "edit", `{"path":"/proj/a","new":"x"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c2","title":"Edit a","name":"edit","kind":"edit","status":"pending","rawInput":{"path":"/proj/a","new":"x"},"content":[{"type":"diff","path":"/proj/a","oldText":null,"newText":"x"}]}`}},
			{ev: cancelled(result("c2", "Error: cancelled by the user")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c2","status":"failed","rawOutput":"Cancelled by the user.","content":[{"type":"diff","path":"/proj/a","oldText":null,"newText":"x"},` + textItem("Cancelled by the user.") + `]}`}},
		},
	},
	{
		name: "cancelled: terminal with capability after live output",
		view: live,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"sleep 60","description":"Wait"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"sleep 60","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"sleep 60","description":"Wait"},"_meta":{"terminal_info":{"terminal_id":"t1","cwd":"/proj"}},"content":[` + textItem("Wait") + `,{"type":"terminal","terminalId":"t1"}]}`}},
			{ev: prog("t1", "line one\n"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","_meta":{"terminal_output":{"terminal_id":"t1","data":"line one\n"}}}`}},
			{ev: withMeta(cancelled(result("t1", "line one\n")), `{"exit":0}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","rawOutput":{"exitCode":null,"signal":"SIGTERM","cancelled":true},"_meta":{"terminal_output":{"terminal_id":"t1","data":"[cancelled by the user]\n"},"terminal_exit":{"terminal_id":"t1","exit_code":null,"signal":"SIGTERM"}}}`}},
		},
	},
	{
		name: "cancelled: terminal with capability, output not sent live",
		view: live,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"sleep 60"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"sleep 60","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"sleep 60"},"_meta":{"terminal_info":{"terminal_id":"t1","cwd":"/proj"}},"content":[{"type":"terminal","terminalId":"t1"}]}`}},
			// The result's text is the tool's error, not output.
			{ev: cancelled(result("t1", "Error: command aborted")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","rawOutput":{"exitCode":null,"signal":"SIGTERM","cancelled":true},"_meta":{"terminal_output":{"terminal_id":"t1","data":"[cancelled by the user]\n"},"terminal_exit":{"terminal_id":"t1","exit_code":null,"signal":"SIGTERM"}}}`}},
			// A result view that says what was printed is shown.
			{ev: call("t2", "bash", `{"command":"sleep 60"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"sleep 60","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"sleep 60"},"_meta":{"terminal_info":{"terminal_id":"t2","cwd":"/proj"}},"content":[{"type":"terminal","terminalId":"t2"}]}`}},
			{ev: withMeta(cancelled(result("t2", "partial")), `{"exit":0}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"failed","rawOutput":{"exitCode":null,"signal":"SIGTERM","cancelled":true},"_meta":{"terminal_output":{"terminal_id":"t2","data":"partial\n[cancelled by the user]\n"},"terminal_exit":{"terminal_id":"t2","exit_code":null,"signal":"SIGTERM"}}}`}},
		},
	},
	{
		name: "cancelled: terminal without capability",
		view: base,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"sleep 60","description":"Wait"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"sleep 60","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"sleep 60","description":"Wait"},"content":[` + textItem("Wait") + `]}`}},
			{ev: prog("t1", "partial\n"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","content":[` + textItem("Wait") + `,` + textItem("```console\npartial\n```") + `]}`}},
			// The output shown so far stays, then the cancel line.
			{ev: cancelled(result("t1", "Error: command aborted")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","rawOutput":{"exitCode":null,"signal":"SIGTERM","cancelled":true},"content":[` + textItem("Wait") + `,` + textItem("```console\npartial\n```") + `,` + textItem("[cancelled by the user]") + `]}`}},
		},
	},
	{
		name: "cancelled: terminal without capability and without output",
		view: base,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"sleep 60"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"sleep 60","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"sleep 60"}}`}},
			{ev: cancelled(result("t1")), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","rawOutput":{"exitCode":null,"signal":"SIGTERM","cancelled":true},"content":[` + textItem("[cancelled by the user]") + `]}`}},
		},
	},
	{
		name: "cancelled: a terminal call cut off before its arguments completed is still shown, as a failed card",
		view: live,
		steps: []step{
			{ev: start("t1", "bash")},
			{ev: session.ToolInput{CallID: "t1", Arguments: `{}`}},
			// The agent logs what had streamed.
			{ev: call("t1", "bash", `{"command":"sle`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"bash","name":"bash","kind":"other","status":"pending","rawInput":"{\"command\":\"sle"}`}},
			{ev: notRun(cancelled(result("t1", "Error: cancelled by the user"))), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","rawOutput":"Cancelled by the user.","content":[` + textItem("Cancelled by the user.") + `]}`}},
		},
	},
	{
		name: "cancelled: a result for a call nothing announced still shows the card",
		view: live,
		steps: []step{
			{ev: start("t1", "bash")},
			{ev: notRun(cancelled(result("t1", "Error: cancelled by the user"))), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"bash","name":"bash","kind":"other","status":"pending"}`,
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"failed","rawOutput":"Cancelled by the user.","content":[` + textItem("Cancelled by the user.") + `]}`}},
		},
	},
	{
		name: "live: chunks stream, logged messages do not repeat them",
		view: base,
		steps: []step{
			{ev: session.TurnStart{Turn: 1}},
			{ev: session.UserMessage{Turn: 1, Content: []tools.Content{tools.Text("hi")}}},
			{ev: session.StepStart{Turn: 1, Step: 1}},
			{ev: session.AssistantChunk{Turn: 1, Step: 1, Kind: session.ChunkReasoning, Text: "hmm"}, want: []string{
				`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"},"messageId":"turn1-step1"}`}},
			{ev: session.AssistantChunk{Turn: 1, Step: 1, Kind: session.ChunkText, Text: "Hello"}, want: []string{
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"},"messageId":"turn1-step1"}`}},
			{ev: session.AssistantChunk{Kind: session.ChunkText, Text: ""}},
			{ev: session.AssistantMessage{Turn: 1, Step: 1, Text: "Hello", Reasoning: "hmm"}},
			{ev: session.StepEnd{Turn: 1, Step: 1}},
			{ev: session.TurnEnd{Turn: 1, Reason: session.EndTurn}},
		},
	},
	{
		name: "plan, session title, mode",
		view: base,
		steps: []step{
			{ev: session.Plan{CallID: "c1", Entries: []tools.PlanEntry{{Content: "Read", Status: "completed"}, {Content: "Fix", Status: "in_progress"}, {Content: "Test", Status: "pending"}}}, want: []string{
				`{"sessionUpdate":"plan","entries":[{"content":"Read","priority":"medium","status":"completed"},{"content":"Fix","priority":"medium","status":"in_progress"},{"content":"Test","priority":"medium","status":"pending"}]}`}},
			{ev: session.Plan{}, want: []string{
				`{"sessionUpdate":"plan","entries":[]}`}},
			{ev: session.Title{Title: "Fix the bug"}, want: []string{
				`{"sessionUpdate":"session_info_update","title":"Fix the bug"}`}},
			// Live, the bridge announces mode changes itself.
			{ev: session.ModeChange{ModeID: "plan"}},
			{ev: session.ConfigChange{ConfigID: "model", Value: "deepseek-v4-pro"}},
			{ev: session.ContextUsage{Turn: 1, Step: 1, Model: "deepseek-flash", Used: 352, Size: 1048576,
				Cost: &session.Cost{Amount: 4.6218e-05, Currency: "USD"}}, want: []string{
				`{"sessionUpdate":"usage_update","used":352,"size":1048576,"cost":{"amount":0.000046218,"currency":"USD"}}`}},
			{ev: session.ContextUsage{Turn: 1, Step: 2, Used: 9000, Size: 128000}, want: []string{
				`{"sessionUpdate":"usage_update","used":9000,"size":128000}`}},
		},
	},
	{
		name: "replay: mode, config and usage",
		view: replay,
		steps: []step{
			{ev: session.ModeChange{ModeID: "plan"}, want: []string{
				`{"sessionUpdate":"current_mode_update","currentModeId":"plan"}`}},
			{ev: session.ConfigChange{ConfigID: "thinking", Value: "max"}},
			{ev: session.ContextUsage{Turn: 2, Step: 1, Used: 10, Size: 20, Cost: &session.Cost{Amount: 0.5, Currency: "EUR"}}, want: []string{
				`{"sessionUpdate":"usage_update","used":10,"size":20,"cost":{"amount":0.5,"currency":"EUR"}}`}},
		},
	},
	{
		name: "replay: messages, a generic call without ToolStart",
		view: replay,
		steps: []step{
			{ev: session.TurnStart{Turn: 1}},
			{ev: session.Title{Title: "Read a"}, want: []string{
				`{"sessionUpdate":"session_info_update","title":"Read a"}`}},
			{ev: session.UserMessage{Turn: 1, Content: []tools.Content{tools.Text("Read a"), tools.Text("\n[resource_link]\n")}}, want: []string{
				`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"Read a"},"messageId":"turn1-user"}`,
				`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"\n[resource_link]\n"},"messageId":"turn1-user"}`}},
			{ev: session.StepStart{Turn: 1, Step: 1}},
			{ev: session.AssistantMessage{Turn: 1, Step: 1, Reasoning: "I will read.", Text: "Reading.", ToolCalls: []session.ToolCallRef{{CallID: "c1", Name: "read", Arguments: `{"path":"a"}`}}}, want: []string{
				`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"I will read."},"messageId":"turn1-step1"}`,
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Reading."},"messageId":"turn1-step1"}`}},
			{ev: call("c1", "read", `{"path":"/proj/a","line":3,"kind":"read"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read a","name":"read","kind":"read","status":"pending","locations":[{"path":"/proj/a","line":3}],"rawInput":{"path":"/proj/a","line":3,"kind":"read"}}`}},
			{ev: result("c1", "text"), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read a (done)","status":"completed","locations":[{"path":"/proj/a","line":3}],"rawOutput":"text","content":[` + textItem("text") + `]}`}},
			{ev: session.StepEnd{Turn: 1, Step: 1}},
			{ev: session.AssistantMessage{Turn: 1, Step: 2, Text: "Done."}, want: []string{
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Done."},"messageId":"turn1-step2"}`}},
			{ev: session.AssistantMessage{Turn: 1, Step: 3}},
			{ev: session.TurnEnd{Turn: 1, Reason: session.EndTurn}},
		},
	},
	{
		name: "replay: terminal with capability sends the output once with the exit",
		view: replayTO,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"ls","description":"List"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"ls","description":"List"},"_meta":{"terminal_info":{"terminal_id":"t1","cwd":"/proj"}},"content":[` + textItem("List") + `,{"type":"terminal","terminalId":"t1"}]}`}},
			{ev: withMeta(result("t1", "a.go\nb.go\n"), `{"exit":0}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"exitCode":0,"signal":null},"_meta":{"terminal_output":{"terminal_id":"t1","data":"a.go\nb.go\n"},"terminal_exit":{"terminal_id":"t1","exit_code":0,"signal":null}}}`}},
		},
	},
	{
		name: "replay: terminal without capability",
		view: replay,
		steps: []step{
			{ev: call("t1", "bash", `{"command":"ls","description":"List"}`), want: []string{
				`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","name":"bash","kind":"execute","status":"pending","rawInput":{"command":"ls","description":"List"},"content":[` + textItem("List") + `]}`}},
			{ev: withMeta(result("t1", "a.go\nb.go\n"), `{"exit":0}`), want: []string{
				`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"exitCode":0,"signal":null},"content":[` + textItem("List") + `,` + textItem("```console\na.go\nb.go\n```") + `]}`}},
		},
	},
	{
		name: "compaction with session.compaction: live",
		view: View{Cwd: "/proj", LineBase: 1, Compaction: true},
		steps: []step{
			{ev: session.CompactionStart{ID: "cmp_1", Turn: 2, Auto: true}, want: []string{
				`{"sessionUpdate":"compaction_update","compactionId":"cmp_1","status":"in_progress"}`}},
			{ev: session.CompactionChunk{ID: "cmp_1", Text: "## Sum"}, want: []string{
				`{"sessionUpdate":"compaction_summary_chunk","compactionId":"cmp_1","content":{"type":"text","text":"## Sum"}}`}},
			{ev: session.CompactionChunk{ID: "cmp_1", Text: ""}},
			{ev: session.Compaction{ID: "cmp_1", Turn: 2, Status: session.CompactionCompleted, Summary: "## Sum", Auto: true}, want: []string{
				`{"sessionUpdate":"compaction_update","compactionId":"cmp_1","status":"completed"}`}},
			{ev: session.CompactionStart{ID: "cmp_2", Turn: 3}, want: []string{
				`{"sessionUpdate":"compaction_update","compactionId":"cmp_2","status":"in_progress"}`}},
			{ev: session.Compaction{ID: "cmp_2", Turn: 3, Status: session.CompactionFailed, Error: "HTTP 500"}, want: []string{
				`{"sessionUpdate":"compaction_update","compactionId":"cmp_2","status":"failed","error":"HTTP 500"}`}},
		},
	},
	{
		name: "compaction with session.compaction: replay gives the start and the summary in one chunk",
		view: View{Cwd: "/proj", LineBase: 1, Compaction: true, Replay: true},
		steps: []step{
			{ev: session.Compaction{ID: "cmp_1", Turn: 2, Status: session.CompactionCompleted, Summary: "## Summary", Auto: true}, want: []string{
				`{"sessionUpdate":"compaction_update","compactionId":"cmp_1","status":"in_progress"}`,
				`{"sessionUpdate":"compaction_summary_chunk","compactionId":"cmp_1","content":{"type":"text","text":"## Summary"}}`,
				`{"sessionUpdate":"compaction_update","compactionId":"cmp_1","status":"completed"}`}},
			{ev: session.Compaction{ID: "cmp_2", Turn: 3, Status: session.CompactionCancelled}, want: []string{
				`{"sessionUpdate":"compaction_update","compactionId":"cmp_2","status":"in_progress"}`,
				`{"sessionUpdate":"compaction_update","compactionId":"cmp_2","status":"cancelled"}`}},
		},
	},
	{
		name: "compaction without session.compaction: an agent message of its own, live and replayed",
		view: base,
		steps: []step{
			{ev: session.CompactionStart{ID: "cmp_1", Turn: 2, Auto: true}, want: []string{
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + CompactingText + `"},"messageId":"cmp_1"}`}},
			{ev: session.CompactionChunk{ID: "cmp_1", Text: "## Sum"}},
			{ev: session.Compaction{ID: "cmp_1", Turn: 2, Status: session.CompactionCompleted, Summary: "## Sum", Auto: true}, want: []string{
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + jsonEsc(CompactedText) + `"},"messageId":"cmp_1"}`}},
			{ev: session.CompactionStart{ID: "cmp_2", Turn: 3}, want: []string{
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + CompactingAskedFor + `"},"messageId":"cmp_2"}`}},
			{ev: session.Compaction{ID: "cmp_2", Turn: 3, Status: session.CompactionFailed, Error: "the model wrote no summary"}, want: []string{
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":" It failed: the model wrote no summary. The conversation is unchanged.\n\n"},"messageId":"cmp_2"}`}},
		},
	},
	{
		name: "compaction without session.compaction, replayed",
		view: replay,
		steps: []step{
			{ev: session.Compaction{ID: "cmp_1", Turn: 2, Status: session.CompactionCancelled}, want: []string{
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + CompactingAskedFor + `"},"messageId":"cmp_1"}`,
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + jsonEsc(CompactionCutText) + `"},"messageId":"cmp_1"}`}},
		},
	},
	{
		name: "replay: a slash command's prompt is shown as typed",
		view: replay,
		steps: []step{
			{ev: session.UserMessage{Turn: 1, Content: []tools.Content{tools.Text("Review the uncommitted changes...")}, Typed: []tools.Content{tools.Text("/review")}}, want: []string{
				`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"/review"},"messageId":"turn1-user"}`}},
		},
	},
}

func TestPresenterSequences(t *testing.T) {
	for _, c := range presentCases {
		t.Run(c.name, func(t *testing.T) { checkCase(t, c) })
	}
}

// TestTitleRelativization: titles of call and result cards show the first
// location's path relative to the cwd when it is inside it (by path
// segment), absolute otherwise (also a relative path that leads out);
// locations are always absolute.
func TestTitleRelativization(t *testing.T) {
	cases := []struct {
		name, cwd, path string
		title, locPath  string // want
	}{
		{"inside", "/proj", "/proj/src/a.go", "src/a.go", "/proj/src/a.go"},
		{"outside", "/proj", "/etc/passwd", "/etc/passwd", "/etc/passwd"},
		{"sibling with the cwd as a name prefix", "/proj", "/proj2/x.go", "/proj2/x.go", "/proj2/x.go"},
		{"parent", "/proj/sub", "/proj/a.go", "/proj/a.go", "/proj/a.go"},
		{"the cwd itself", "/proj", "/proj", "/proj", "/proj"},
		{"a name starting with two dots", "/proj", "/proj/..cache/x", "..cache/x", "/proj/..cache/x"},
		{"relative path", "/proj", "src/a.go", "src/a.go", "/proj/src/a.go"},
		{"relative path climbing out", "/proj", "../other/a.go", "/other/a.go", "/other/a.go"},
		{"relative path climbing out on the way", "/proj", "src/../../x", "/x", "/x"},
		{"relative path climbing out and back in", "/proj", "../proj/a.go", "../proj/a.go", "/proj/a.go"},
		{"no cwd, absolute path", "", "/proj/a.go", "/proj/a.go", "/proj/a.go"},
		{"no cwd, relative path", "", "src/a.go", "src/a.go", "src/a.go"},
		{"root cwd", "/", "/etc/hosts", "etc/hosts", "/etc/hosts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := fmt.Sprintf(`{"path":%s}`, jsonStr(c.path))
			loc := fmt.Sprintf(`"locations":[{"path":%s}]`, jsonStr(c.locPath))
			checkCase(t, presentCase{view: View{Cwd: c.cwd, LineBase: 1}, steps: []step{
				{ev: call("c1", "read", args), want: []string{
					`{"sessionUpdate":"tool_call","toolCallId":"c1","title":` + jsonStr("Read "+c.title) + `,"name":"read","kind":"other","status":"pending",` + loc + `,"rawInput":` + args + `}`}},
				{ev: result("c1", "r"), want: []string{
					`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":` + jsonStr("Read "+c.title+" (done)") + `,"status":"completed",` + loc + `,"rawOutput":"r","content":[` + textItem("r") + `]}`}},
				{ev: call("c2", "edit", fmt.Sprintf(`{"path":%s,"new":"n"}`, jsonStr(c.path))), want: []string{
					`{"sessionUpdate":"tool_call","toolCallId":"c2","title":` + jsonStr("Edit "+c.title) + `,"name":"edit","kind":"edit","status":"pending","rawInput":{"path":` + jsonStr(c.path) + `,"new":"n"},"content":[{"type":"diff","path":` + jsonStr(c.locPath) + `,"oldText":null,"newText":"n"}]}`}},
				{ev: result("c2", "ok"), want: []string{
					`{"sessionUpdate":"tool_call_update","toolCallId":"c2","title":` + jsonStr("Edited "+c.title) + `,"status":"completed","rawOutput":"ok","content":[{"type":"diff","path":` + jsonStr(c.locPath) + `,"oldText":null,"newText":"n"}]}`}},
			}})
		})
	}
}

// TestLocationLineBase: lines are 1-based inside and written in the
// view's base; line 0 means no line and writes no key.
func TestLocationLineBase(t *testing.T) {
	cases := []struct {
		base, line int
		want       string // the location's JSON
	}{
		{1, 5, `{"path":"/proj/a","line":5}`},
		{0, 5, `{"path":"/proj/a","line":4}`},
		{1, 1, `{"path":"/proj/a","line":1}`},
		{0, 1, `{"path":"/proj/a","line":0}`},
		{1, 0, `{"path":"/proj/a"}`},
		{0, 0, `{"path":"/proj/a"}`},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("base%d-line%d", c.base, c.line), func(t *testing.T) {
			args := fmt.Sprintf(`{"path":"a","line":%d}`, c.line)
			checkCase(t, presentCase{view: View{Cwd: "/proj", LineBase: c.base}, steps: []step{
				{ev: call("c1", "read", args), want: []string{
					`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read a","name":"read","kind":"other","status":"pending","locations":[` + c.want + `],"rawInput":` + args + `}`}},
				{ev: result("c1", "r"), want: []string{
					`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Read a (done)","status":"completed","locations":[` + c.want + `],"rawOutput":"r","content":[` + textItem("r") + `]}`}},
			}})
		})
	}
}

// TestSnapshotTail: a no-capability snapshot shows at most the last 8 KiB
// of output, cut at a character boundary.
func TestSnapshotTail(t *testing.T) {
	p := NewPresenter(base, fakeTools())
	p.Updates(session.Event{Data: call("t1", "bash", `{"command":"yes"}`)})
	out := strings.Repeat("€", 3000) + "\n" // 9001 bytes, 3-byte runes
	us := p.Updates(session.Event{Data: prog("t1", out)})
	var snap acp.ToolCallUpdate
	if len(us) == 1 {
		snap, _ = us[0].(acp.ToolCallUpdate)
	}
	var item acp.Content
	if len(snap.Content) == 1 {
		item, _ = snap.Content[0].(acp.Content)
	}
	if item.Content.Type != acp.BlockText {
		t.Fatalf("want one update with one text item, got %+v", us)
	}
	text := item.Content.Text
	body, ok := strings.CutPrefix(text, "```console\n")
	if ok {
		body, ok = strings.CutSuffix(body, "\n```")
	}
	if !ok {
		t.Fatalf("not a console fence: %q", text)
	}
	const limit = 8 << 10
	if !utf8.ValidString(body) || len(body) > limit || len(body) < limit-3 || !strings.HasSuffix(out, body+"\n") {
		t.Errorf("tail: %d bytes, valid UTF-8 %v, want the last ≤%d bytes of the output at a rune boundary", len(body), utf8.ValidString(body), limit)
	}
}

// TestPresenterUpdatesMatchSchema: every update the tables produce is a
// valid ACP session/update notification.
func TestPresenterUpdatesMatchSchema(t *testing.T) {
	v := acptest.Load(t)
	for _, c := range presentCases {
		if c.bug != "" {
			continue
		}
		for i, us := range runCase(t, c) {
			for _, u := range us {
				line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":` + u + `}}`
				if err := v.Validate([]byte(line), ""); err != nil {
					t.Errorf("%s, step %d: %v\n%s", c.name, i, err, u)
				}
			}
		}
	}
}

// resolveWith is the call id of tool name with args as l finds it.
func resolveWith(l fakeLookup, id, name, args string) *tools.Call {
	t, _ := l.Get(name)
	return t.Resolve(id, name, json.RawMessage(args))
}
