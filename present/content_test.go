package present

import (
	"encoding/json"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestResultBlocks: a generic result's blocks reach the card as ACP
// blocks (image, resource link, embedded text resource) or, where no
// client is known to show them or a required field is missing, as
// their text form; the tool's RawOutput (JSON) replaces the text as
// rawOutput. Every update is schema-valid.
func TestResultBlocks(t *testing.T) {
	blocks := []tools.Content{
		tools.Text("a red dot"),
		tools.Image("iVBORw0KGgo=", "image/png"),
		{Type: tools.ContentResourceLink, URI: "note://all", Name: "all notes", MimeType: "text/plain"},
		{Type: tools.ContentResourceLink, URI: "note://x"},
		{Type: tools.ContentResource, URI: "note://todo", MimeType: "text/plain", Text: "buy milk"},
		{Type: tools.ContentResource, URI: "blob://b", MimeType: "application/octet-stream", Data: "AAEC"},
		{Type: tools.ContentAudio, Data: "AAAA", MimeType: "audio/wav"},
		{Type: tools.ContentImage, Data: "AAAA"},
		{Type: tools.ContentResource, URI: "note://empty"},
		{Type: "hologram"},
	}
	raw := json.RawMessage(`{"content":[{"type":"text","text":"a red dot"}],"isError":false}`)
	lookup := fakeLookup{"mcp__notes__picture": {Name: "mcp__notes__picture",
		PresentCall: func(json.RawMessage) tools.ToolCallView { return tools.GenericCall{Title: "Picture"} },
		PresentResult: func(_ json.RawMessage, r tools.ResultInput) tools.ToolResultView {
			return tools.GenericResult{Content: blocks, RawOutput: raw}
		}}}
	p := NewPresenter(View{Cwd: "/proj", LineBase: 1}, lookup)
	p.Updates(session.Event{Data: session.ToolCall{CallID: "c1", Name: "mcp__notes__picture", Arguments: `{}`}})
	us := p.Updates(session.Event{Data: session.ToolResult{CallID: "c1", Content: []tools.Content{tools.Text("model text")}}})
	if len(us) != 1 {
		t.Fatalf("%d updates", len(us))
	}
	u := us[0].(acp.ToolCallUpdate)
	want := []acp.ContentBlock{
		acp.TextBlock("a red dot"),
		{Type: acp.BlockImage, Data: "iVBORw0KGgo=", MimeType: "image/png"},
		{Type: acp.BlockResourceLink, URI: "note://all", Name: "all notes", MimeType: "text/plain"},
		{Type: acp.BlockResourceLink, URI: "note://x", Name: "note://x"},
		{Type: acp.BlockResource, Resource: &acp.EmbeddedResource{URI: "note://todo", MimeType: "text/plain", Text: "buy milk"}},
		acp.TextBlock("[resource blob://b (application/octet-stream): 3 bytes]"),
		acp.TextBlock("[audio: audio/wav, 3 bytes]"),
		acp.TextBlock("[image: unknown type, 3 bytes]"),
		acp.TextBlock("[resource note://empty]\n"),
		acp.TextBlock("[hologram content]"),
	}
	if len(u.Content) != len(want) {
		t.Fatalf("content %+v, want %d items", u.Content, len(want))
	}
	for i, item := range u.Content {
		c, ok := item.(acp.Content)
		got, _ := json.Marshal(c.Content)
		exp, _ := json.Marshal(want[i])
		if !ok || string(got) != string(exp) {
			t.Errorf("item %d = %s, want %s", i, got, exp)
		}
	}
	if string(u.RawOutput) != string(raw) {
		t.Errorf("rawOutput = %s, want the tool's %s", u.RawOutput, raw)
	}
	line, err := json.Marshal(acp.SessionNotification{SessionID: "s1", Update: u})
	if err != nil {
		t.Fatal(err)
	}
	if err := acptest.Load(t).Validate([]byte(`{"jsonrpc":"2.0","method":"session/update","params":`+string(line)+`}`), ""); err != nil {
		t.Errorf("%v\n%s", err, line)
	}
}
