package toolmcp

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/tools/toolstest"
)

// TestConformance runs the tools contract checks on every tool a real MCP
// server (the test server over stdio) registers, and on the replay tool
// session/load builds from each one's logged definition, with results of
// the shapes MCP content takes (text, an image, a resource link, an
// error, structured content).
func TestConformance(t *testing.T) {
	f := start(t, Options{}, stdioServer("notes", filepath.Join(t.TempDir(), "events")))
	results := []tools.ResultInput{
		{Content: []tools.Content{tools.Text("the note's text")}},
		{Content: []tools.Content{{Type: "image", Data: "iVBORw0KGgo=", MimeType: "image/png"}, {Type: "resource_link", URI: "note://all", Name: "all notes"}}},
		{Content: []tools.Content{tools.Text(`{"count":2}`)}, Meta: json.RawMessage(`{"structuredContent":{"count":2}}`)},
		{IsError: true, Content: []tools.Content{tools.Text("Error: MCP tool failed")}},
	}
	samples := map[string][]json.RawMessage{
		"mcp__notes__read_note":    {json.RawMessage(`{"name":"todo"}`)},
		"mcp__notes__write_note":   {json.RawMessage(`{"name":"todo","text":"buy milk"}`)},
		"mcp__notes__search_notes": {json.RawMessage(`{"query":"milk"}`)},
		"mcp__notes__slow":         {json.RawMessage(`{"ms":10}`)},
	}
	for _, name := range wantNotes {
		tl, ok := f.shared.Lookup(f.session, name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		cfg := toolstest.Config{Samples: samples[name], Results: results, Rounds: 100}
		t.Run(name, func(t *testing.T) { toolstest.Run(t, tl, cfg) })
		def, ok := f.set.Definition(name)
		if !ok {
			t.Fatalf("no logged definition for %s", name)
		}
		rt, err := ReplayTool(name, def)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name+"/replay", func(t *testing.T) { toolstest.Run(t, rt, cfg) })
	}
}
