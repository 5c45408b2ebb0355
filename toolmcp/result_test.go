package toolmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-acp/dsh-acp/internal/probe"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestLiveCallDecodes: one call through the real path (the test server
// over stdio, the shared registry's Execute, the cards and Access as
// the session asks for them) decodes its result once, in the SDK: its
// model text and final card come from the SDK's typed content, and the
// logged Meta is decoded only when a replay tool shows it. Its
// arguments are parsed once, by the call's resolution, for two call
// cards and two Access checks: toolmcp parses none itself. Live and
// replayed cards are the same.
func TestLiveCallDecodes(t *testing.T) {
	f := start(t, Options{}, stdioServer("notes", filepath.Join(t.TempDir(), "events")))
	for _, c := range []struct{ name, args string }{
		{"mcp__notes__picture", `{}`},
		{"mcp__notes__structured", `{"path":"/tmp/x"}`},
		{"mcp__notes__read_note", `{"name":"todo"}`},
	} {
		tool, ok := f.shared.Lookup(f.session, c.name)
		if !ok {
			t.Fatalf("no %s", c.name)
		}
		args := json.RawMessage(c.args)
		decodes, parses := loggedDecodes.Load(), argParses.Load()
		counts, stop := probe.Start()
		call := f.shared.Resolve(f.session, "call_1", c.name, args)
		for range 2 {
			if call.CallView() == nil {
				t.Fatalf("%s: no call card", c.name)
			}
			if _, ok := call.Access(); !ok {
				t.Fatalf("%s: Access not ok", c.name)
			}
		}
		stop()
		if n := counts.Decodes.Load(); n != 1 {
			t.Errorf("%s: the arguments were decoded %d times, want once (the resolution)", c.name, n)
		}
		r := f.call(context.Background(), c.name, c.args)
		if r.IsError {
			t.Fatalf("%s: %s", c.name, tools.JoinText(r.Content))
		}
		in := tools.ResultInput{Content: r.Content, Meta: r.Meta}
		live := r.View
		if live == nil {
			t.Fatalf("%s: the result carries no card", c.name)
		}
		if n := loggedDecodes.Load() - decodes; n != 0 {
			t.Errorf("%s: the live path decoded the logged result %d times", c.name, n)
		}
		if n := argParses.Load() - parses; n != 0 {
			t.Errorf("%s: toolmcp parsed the arguments %d times, want none", c.name, n)
		}
		def, _ := f.set.Definition(c.name)
		replay, err := ReplayTool(c.name, def)
		if err != nil {
			t.Fatal(err)
		}
		decodes = loggedDecodes.Load()
		if got := replay.ResultView(args, in); !reflect.DeepEqual(got, live) {
			t.Errorf("%s: replayed card %+v, live %+v", c.name, got, live)
		}
		if n := loggedDecodes.Load() - decodes; n != 1 {
			t.Errorf("%s: the replay decoded the logged result %d times", c.name, n)
		}
		// The live tool builds the same card from the logged result.
		if got := tool.ResultView(args, in); !reflect.DeepEqual(got, live) {
			t.Errorf("%s: the live tool's card from the log %+v, live %+v", c.name, got, live)
		}
	}
}

// TestSDKResultAsLogged: for results of every content type, a live
// call's model content, error and final card (sdkResult from the SDK's
// types) are those the logged result gives decoded (wireResult), which
// is what they were before the live path stopped decoding; over
// maxMetaBytes too, where the log leaves the binary payloads out. Its
// Meta is json.Marshal's of the result.
func TestSDKResultAsLogged(t *testing.T) {
	title := "All notes"
	big := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, maxMetaBytes/3)
	cases := map[string]*mcp.CallToolResult{
		"text":  {Content: []mcp.Content{&mcp.TextContent{Text: "a <b> & \u2028 c"}}},
		"empty": {},
		"every type": {Content: []mcp.Content{
			&mcp.TextContent{Text: "a red dot", Meta: mcp.Meta{"k": "v"}},
			&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G', 0, 1, 2}, MIMEType: "image/png"},
			&mcp.ImageContent{MIMEType: "image/svg+xml"},
			&mcp.AudioContent{Data: []byte("RIFF...."), MIMEType: "audio/wav"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "note://todo", MIMEType: "text/plain", Text: "buy milk"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "note://b", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "note://e", Blob: []byte{}}},
			&mcp.EmbeddedResource{},
			&mcp.ResourceLink{URI: "note://all", Name: "all notes"},
			&mcp.ResourceLink{URI: "note://all", Name: "all", Title: title, MIMEType: "text/plain"},
			nil,
		}},
		"sampling types":      fromWire(t, `{"content":[{"type":"tool_use","id":"u","name":"n","input":{}},{"type":"tool_result","toolUseId":"u","content":[]}]}`),
		"structured":          {StructuredContent: map[string]any{"count": 2, "items": []string{"a", "<b>"}}},
		"structured as text":  {Content: []mcp.Content{&mcp.TextContent{Text: `{"count": 2}`}}, StructuredContent: map[string]any{"count": 2.0}},
		"structured in text":  {Content: []mcp.Content{&mcp.TextContent{Text: "line one\n"}}, StructuredContent: map[string]any{"content": "line one\n"}},
		"structured raw":      {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(` { "a" : [1, "<x>"] } `)},
		"structured null":     {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(`null`)},
		"error":               {Content: []mcp.Content{&mcp.TextContent{Text: "locked"}}, StructuredContent: map[string]any{"code": 7}, IsError: true},
		"error without words": {IsError: true},
		"over 1 MiB, binary": {Content: []mcp.Content{
			&mcp.TextContent{Text: "a chart"},
			&mcp.ImageContent{Data: big, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "r://b", Blob: []byte{1}}},
		}},
		"over 1 MiB, text": {Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("line\n", maxMetaBytes/4)}}},
	}
	for name, res := range cases {
		d := &toolDef{server: "s<&>\"", original: "t\u2028é"}
		out, err := d.output(res)
		raw, _ := json.Marshal(res)
		var w wireResult
		if err := json.Unmarshal(raw, &w); err != nil {
			t.Fatal(err)
		}
		want := w.result(false).blocks()
		if res.IsError {
			if err == nil || err.Error() != errorText(want) {
				t.Errorf("%s: error %v, want %q", name, err, errorText(want))
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rest, imgs := carriedImages(want)
		wantModel := append([]tools.Content{}, imgs...)
		if len(rest) > 0 || len(imgs) == 0 {
			wantModel = append([]tools.Content{tools.Text(modelText(rest))}, imgs...)
		}
		logged := meta{Server: d.server, Tool: d.original, Result: raw}
		if len(raw) > maxMetaBytes {
			logged.Result, logged.Stripped = stripBinary(raw)
		}
		if wantMeta, _ := json.Marshal(logged); !bytes.Equal(out.Meta, wantMeta) {
			t.Errorf("%s: Meta %.300s, want %.300s", name, out.Meta, wantMeta)
		}
		if !reflect.DeepEqual(out.Content, wantModel) {
			t.Errorf("%s: model content %+v, want %+v", name, out.Content, wantModel)
		}
		in := tools.ResultInput{Content: out.Content, Meta: bytes.Clone(out.Meta)}
		live := out.View
		if logged := (&toolDef{}).presentResult(nil, in); !reflect.DeepEqual(live, logged) {
			t.Errorf("%s: live card %+v, logged %+v", name, live, logged)
		}
	}
}

// fromWire is the SDK's result decoded from raw, as a client gets it.
func fromWire(t *testing.T, raw string) *mcp.CallToolResult {
	t.Helper()
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatal(err)
	}
	return &res
}
