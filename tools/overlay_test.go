package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// rawTool is a raw JSON-Schema tool answering "<name>:<args>".
func rawTool(name, schema string) tools.Tool {
	return tools.Tool{Name: name, Description: "raw " + name, Parameters: json.RawMessage(schema),
		Execute: func(_ context.Context, ex *tools.Exec) (tools.Output, error) {
			return tools.Output{Content: []tools.Content{tools.Text(name + ":" + string(ex.Args))}}, nil
		}}
}

func schemaNames(ss []tools.Schema) string {
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	return strings.Join(names, ",")
}

// TestSessionTools: a session's own tools run through the shared chain,
// are validated by their raw schema, are listed (sorted, after the
// shared ones) for that session only, and never shadow a shared tool.
func TestSessionTools(t *testing.T) {
	shared := tools.NewRegistry()
	mustRegister(t, shared, echoTool("echo", nil), rawTool("zeta", `{"type":"object"}`))
	var seen []string
	shared.Use(func(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result {
		if tool, ok := shared.Lookup(ex.Session, ex.Name); ok {
			seen = append(seen, tool.Description)
		} else {
			seen = append(seen, "unknown "+ex.Name)
		}
		return next(ctx, ex)
	})
	a, b := tools.NewSession("a", "/a"), tools.NewSession("b", "/b")
	own := tools.SessionTools(a)
	if own == nil || tools.SessionTools(a) != own {
		t.Fatal("SessionTools must create the registry once and return it again")
	}
	if tools.SessionTools(nil) != nil {
		t.Fatal("SessionTools(nil) must be nil")
	}
	mustRegister(t, own,
		rawTool("mcp__s__write", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		rawTool("mcp__s__read", `{"type":"object"}`),
		rawTool("echo", `{"type":"object"}`)) // shadowed by the shared echo

	if got := schemaNames(shared.SchemasFor(a)); got != "echo,zeta,mcp__s__read,mcp__s__write" {
		t.Errorf("SchemasFor(a) = %s", got)
	}
	if got := schemaNames(shared.SchemasFor(b)); got != "echo,zeta" {
		t.Errorf("SchemasFor(b) = %s, want only the shared tools", got)
	}
	if got := schemaNames(shared.SchemasFor(nil)); got != "echo,zeta" {
		t.Errorf("SchemasFor(nil) = %s", got)
	}
	if tools.SessionTools(b) == nil || len(shared.SchemasFor(b)) != 2 {
		t.Error("an empty session registry adds nothing")
	}

	run := func(s tools.Session, name, args string) tools.Result {
		return shared.Execute(context.Background(), &tools.Exec{CallID: "c", Name: name, Args: json.RawMessage(args), Session: s})
	}
	if r := run(a, "mcp__s__write", `{"n":3}`); r.IsError || tools.JoinText(r.Content) != `mcp__s__write:{"n":3}` {
		t.Errorf("session tool call = %+v", r)
	}
	r := run(a, "mcp__s__write", `{"n":"three"}`)
	if !r.IsError || r.Error == nil || r.Error.Code != tools.CodeInvalidArgs || !strings.Contains(tools.JoinText(r.Content), `/properties/n: type: three has type "string", want "integer"`) {
		t.Errorf("invalid args to a session tool = %+v", r)
	}
	if r := run(a, "echo", `{"text":"hi"}`); tools.JoinText(r.Content) != "hi" {
		t.Errorf("a shared tool must win over the session's tool of the same name: %+v", r)
	}
	if r := run(b, "mcp__s__write", `{"n":3}`); !r.IsError || r.Error == nil || r.Error.Code != tools.CodeUnknownTool {
		t.Errorf("another session ran a's tool: %+v", r)
	}
	want := "raw mcp__s__write,raw mcp__s__write,Echo the text.,unknown mcp__s__write"
	if got := strings.Join(seen, ","); got != want {
		t.Errorf("the middleware saw %s, want %s", got, want)
	}

	if _, ok := shared.Get("mcp__s__read"); ok {
		t.Error("Get must know the shared tools only")
	}
	if tool, ok := shared.Lookup(a, "mcp__s__read"); !ok || tool.Description != "raw mcp__s__read" {
		t.Errorf("Lookup(a) = %+v %v", tool, ok)
	}
	if _, ok := shared.Lookup(b, "mcp__s__read"); ok {
		t.Error("Lookup(b) found a's tool")
	}

	// Tools come and go while the session lives: the next request sees
	// the change.
	own.Unregister("mcp__s__read")
	if got := schemaNames(shared.SchemasFor(a)); got != "echo,zeta,mcp__s__write" {
		t.Errorf("after Unregister: %s", got)
	}
	if r := run(a, "mcp__s__read", `{}`); r.Error == nil || r.Error.Code != tools.CodeUnknownTool {
		t.Errorf("an unregistered session tool ran: %+v", r)
	}
}

func TestContentTextForm(t *testing.T) {
	cases := []struct {
		c    tools.Content
		want string
	}{
		{tools.Text("plain"), "plain"},
		{tools.Content{Text: "untyped"}, "untyped"},
		{tools.Image("iVBORw0KGgo=", "image/png"), "[image: image/png, 8 bytes]"},
		{tools.Content{Type: tools.ContentAudio, Data: "AAAA"}, "[audio: unknown type, 3 bytes]"},
		{tools.Content{Type: tools.ContentResource, URI: "file:///n.txt", MimeType: "text/plain", Text: "body"}, "[resource file:///n.txt (text/plain)]\nbody"},
		{tools.Content{Type: tools.ContentResource, URI: "mem://b", Data: "AAE="}, "[resource mem://b: 2 bytes]"},
		{tools.Content{Type: tools.ContentResourceLink, URI: "file:///n.txt", Name: "notes"}, "[resource link: notes <file:///n.txt>]"},
		{tools.Content{Type: "video"}, "[video content]"},
	}
	for _, c := range cases {
		if got := c.c.TextForm(); got != c.want {
			t.Errorf("TextForm(%+v) = %q, want %q", c.c, got, c.want)
		}
	}
	// Text blocks keep their wire shape; the new fields stay out of it.
	b, _ := json.Marshal([]tools.Content{tools.Text("x"), tools.Image("AA==", "image/png")})
	if got := string(b); got != `[{"type":"text","text":"x"},{"type":"image","text":"","data":"AA==","mimeType":"image/png"}]` {
		t.Errorf("marshal = %s", got)
	}
}
