package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
	"github.com/dsh-acp/dsh-acp/tools"
)

// peekTool is a throwaway tool that reads one file of the project: only
// its own declaration (class) tells the permission policy what it does.
// ran counts the calls that really ran.
func peekTool(class tools.Class, ran *atomic.Int32) tools.Tool {
	type args struct {
		Path string `json:"path"`
	}
	return tools.Define(tools.Def[args]{
		Name: "peek", Description: "test: look at a file", Class: class, ConcurrencySafe: true,
		Spec:   tools.Spec{{Name: "path", Prop: tools.Prop{Type: tools.TypeString, Required: true}}},
		Access: func(a args) tools.Access { return tools.Access{Paths: []string{a.Path}} },
		Execute: func(context.Context, *tools.Exec, args) (tools.Output, error) {
			ran.Add(1)
			return tools.Output{Content: []tools.Content{tools.Text("peeked")}}, nil
		},
	})
}

// TestReadOnlyToolThroughOptions: a read-only tool the rest of the
// program has never heard of, added through Options.Tools, runs unasked in
// plan and default mode. The same tool declaring nothing is refused in
// plan mode and asks in default mode: the declaration, not a list in
// package permission, is what lets it run.
func TestReadOnlyToolThroughOptions(t *testing.T) {
	cases := []struct {
		mode  string
		class tools.Class
		want  string // run, ask (then allowed once) or refuse
	}{
		{"plan", tools.ClassReadOnly, "run"},
		{"default", tools.ClassReadOnly, "run"},
		{"plan", tools.ClassUndeclared, "refuse"},
		{"default", tools.ClassUndeclared, "ask"},
	}
	for _, c := range cases {
		t.Run(c.mode+"/"+c.class.String(), func(t *testing.T) {
			var ran atomic.Int32
			rec := e2etest.Replay(t, e2etest.ToolCalls([2]string{"peek", `{"path":"notes.txt"}`}), e2etest.Text(nil, []string{"Done."}, "stop"))
			h := newHarness(t, harnessOpts{replay: rec, mode: c.mode, tools: []tools.Tool{peekTool(c.class, &ran)}})
			pc := &permissionClient{outcome: "allow-once"}
			h.client.OnRequest = pc.handle
			sid := h.start(harnessOpts{})
			if stop, err := h.prompt(sid, "peek at the notes"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			wantRan, wantAsked, wantStatus := 1, 0, "completed"
			switch c.want {
			case "ask":
				wantAsked = 1
			case "refuse":
				wantRan, wantStatus = 0, "failed"
			}
			if int(ran.Load()) != wantRan || pc.count() != wantAsked {
				t.Errorf("ran %d times, asked %d times; want %d and %d", ran.Load(), pc.count(), wantRan, wantAsked)
			}
			if got := finalStatuses(h.sessionUpdates()); got != wantStatus {
				t.Errorf("final status %q, want %q", got, wantStatus)
			}
		})
	}
}

// TestNewRejects: what cannot be assembled is an error from server.New
// that names the cause, not a log line.
func TestNewRejects(t *testing.T) {
	var ran atomic.Int32
	base := -1
	bad := 2
	client := llm.NewReplay(t.TempDir())
	cases := []struct {
		name string
		o    server.Options
		want string
	}{
		{"no client", server.Options{}, "Client is required"},
		{"unknown mode", server.Options{Client: client, Mode: "yolo"}, `unknown mode "yolo"`},
		{"line base -1", server.Options{Client: client, LocationLineBase: &base}, "must be 0 or 1, got -1"},
		{"line base 2", server.Options{Client: client, LocationLineBase: &bad}, "must be 0 or 1, got 2"},
		{"a default tool's name", server.Options{Client: client, Tools: []tools.Tool{{Name: "read", Parameters: json.RawMessage(`{"type":"object"}`),
			Execute: func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }}}},
			`registering tool "read": tools: tool "read" is already registered`},
		{"the same tool twice", server.Options{Client: client, Tools: []tools.Tool{peekTool(tools.ClassReadOnly, &ran), peekTool(tools.ClassReadOnly, &ran)}},
			`tool "peek" is already registered`},
		{"a schema that is no object", server.Options{Client: client, Tools: []tools.Tool{{Name: "listy", Parameters: json.RawMessage(`{"type":"array"}`),
			Execute: func(context.Context, *tools.Exec) (tools.Output, error) { return tools.Output{}, nil }}}},
			`registering tool "listy"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, err := server.New(c.o)
			if err == nil {
				srv.Close()
				t.Fatalf("New succeeded, want an error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestDefaultToolFacts: the default tools, in order, then Options.Tools,
// each with the class and concurrency safety it declares.
func TestDefaultToolFacts(t *testing.T) {
	var ran atomic.Int32
	srv, err := server.New(server.Options{Client: llm.NewReplay(t.TempDir()), Tools: []tools.Tool{peekTool(tools.ClassReadOnly, &ran)}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	want := []struct {
		name       string
		class      tools.Class
		concurrent bool
	}{
		{"read", tools.ClassReadOnly, true},
		{"write", tools.ClassEdit, false},
		{"edit", tools.ClassEdit, false},
		{"bash", tools.ClassExecute, false},
		{"bash_output", tools.ClassReadOnly, true},
		{"bash_kill", tools.ClassAgentState, false},
		{"todo_write", tools.ClassAgentState, false},
		{"ask_user", tools.ClassAgentState, false},
		{"grep", tools.ClassReadOnly, true},
		{"glob", tools.ClassReadOnly, true},
		{"subagent", tools.ClassAgentState, true},
		{"subagent_fork", tools.ClassAgentState, true},
		{"peek", tools.ClassReadOnly, true},
	}
	var names []string
	for _, s := range srv.Tools().Schemas() {
		names = append(names, s.Name)
	}
	var wantNames []string
	for _, w := range want {
		wantNames = append(wantNames, w.name)
		tl, ok := srv.Tools().Get(w.name)
		if !ok {
			t.Errorf("%s is not registered", w.name)
			continue
		}
		if tl.Class != w.class || tl.ConcurrencySafe != w.concurrent {
			t.Errorf("%s: Class %v, ConcurrencySafe %v; want %v, %v", w.name, tl.Class, tl.ConcurrencySafe, w.class, w.concurrent)
		}
	}
	if fmt.Sprint(names) != fmt.Sprint(wantNames) {
		t.Errorf("tools %v, want %v", names, wantNames)
	}
}

// TestLocationLineBaseOption: Options.LocationLineBase forces the base of
// `locations[].line` whatever the client; nil leaves it per client (1 for
// a client that is not Zed).
func TestLocationLineBaseOption(t *testing.T) {
	zero := 0
	for _, c := range []struct {
		name string
		base *int
		want string
	}{
		{"forced 0", &zero, `"locations":[{"path":"{{cwd}}/src/a.go","line":0}]`},
		{"per client", nil, `"locations":[{"path":"{{cwd}}/src/a.go","line":1}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := e2etest.Replay(t, e2etest.ToolCalls([2]string{"card_generic", `{"path":"src/a.go"}`}), e2etest.Text(nil, []string{"Done."}, "stop"))
			h := newHarness(t, harnessOpts{replay: rec, lineBase: c.base})
			sid := h.start(harnessOpts{info: map[string]string{"name": "test-client", "version": "1"}})
			if stop, err := h.prompt(sid, "read it"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			var found bool
			for _, l := range h.tr.AgentLines() {
				found = found || bytes.Contains(bytes.ReplaceAll(l, []byte(h.cwd), []byte("{{cwd}}")), []byte(c.want))
			}
			if !found {
				t.Errorf("no agent message holds %s", c.want)
			}
		})
	}
}
