package present

import (
	"encoding/json"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestPermissionCard: the card of a permission request is the call card
// (same titles, paths, kinds and items as the live one), pending, with
// the arguments as rawInput; a preview replaces the tool's call view; a
// terminal tool keeps its terminal item when the editor shows live
// terminals; an unknown tool gets the fallback card.
func TestPermissionCard(t *testing.T) {
	newText := "n"
	cases := []struct {
		name, tool, args string
		view             View
		preview          tools.ToolCallView
		want             string
	}{
		{"diff card", "edit", `{"path":"/proj/a.go","new":"n","loc":true,"line":3}`, base, nil,
			`{"toolCallId":"c1","title":"Edit a.go","kind":"edit","status":"pending","locations":[{"path":"/proj/a.go","line":3}],"rawInput":{"path":"/proj/a.go","new":"n","loc":true,"line":3},"content":[{"type":"diff","path":"/proj/a.go","oldText":null,"newText":"n"}]}`},
		{"zed line base", "read", `{"path":"src/a.go","line":3}`, zed, nil,
			`{"toolCallId":"c1","title":"Read src/a.go","kind":"other","status":"pending","locations":[{"path":"/proj/src/a.go","line":2}],"rawInput":{"path":"src/a.go","line":3}}`},
		{"preview replaces the call view", "edit", `{"path":"a.go"}`, base,
			tools.DiffCall{Title: "Edit /proj/b.go", Diffs: []tools.FileDiff{{Path: "/proj/b.go", NewText: newText}}},
			`{"toolCallId":"c1","title":"Edit b.go","kind":"edit","status":"pending","rawInput":{"path":"a.go"},"content":[{"type":"diff","path":"/proj/b.go","oldText":null,"newText":"n"}]}`},
		{"terminal, live: the whole command is the title", "bash", `{"command":"make\nall","description":"Build"}`, live, nil,
			`{"toolCallId":"c1","title":"make\nall","kind":"execute","status":"pending","rawInput":{"command":"make\nall","description":"Build"},"content":[{"type":"content","content":{"type":"text","text":"Build"}},{"type":"terminal","terminalId":"c1"}]}`},
		{"terminal, no live terminals", "bash", `{"command":"make"}`, base, nil,
			`{"toolCallId":"c1","title":"make","kind":"execute","status":"pending","rawInput":{"command":"make"}}`},
		{"terminal, no live terminals: one line, and the command whole in a sh fence", "bash", `{"command":"git status\nrm -f x.txt","description":"Clean"}`, base, nil,
			`{"toolCallId":"c1","title":"git status…","kind":"execute","status":"pending","rawInput":{"command":"git status\nrm -f x.txt","description":"Clean"},"content":[{"type":"content","content":{"type":"text","text":"Clean"}},{"type":"content","content":{"type":"text","text":"` + "```sh\\ngit status\\nrm -f x.txt\\n```" + `"}}]}`},
		{"terminal view of a non-terminal tool", "fake_term", `{"command":"ls","description":"List"}`, live, nil,
			`{"toolCallId":"c1","title":"ls","kind":"execute","status":"pending","rawInput":{"command":"ls","description":"List"},"content":[{"type":"content","content":{"type":"text","text":"List"}}]}`},
		{"unknown tool", "nope", `not json`, base, nil,
			`{"toolCallId":"c1","title":"nope","kind":"other","status":"pending","rawInput":"not json"}`},
	}
	v := acptest.Load(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := PermissionCard(c.view, resolveWith(fakeTools(), "c1", c.tool, c.args), c.preview)
			b, err := json.Marshal(u)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("\n got %s\nwant %s", b, c.want)
			}
			req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": acp.MethodSessionRequestPermission,
				"params": acp.RequestPermissionRequest{SessionID: "s", ToolCall: u, Options: []acp.PermissionOption{{OptionID: "a", Name: "Allow", Kind: acp.AllowOnce}}}})
			if err := v.Validate(req, ""); err != nil {
				t.Errorf("schema: %v\n%s", err, req)
			}
		})
	}
}
