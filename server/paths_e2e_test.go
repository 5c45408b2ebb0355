package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// finalWire is the last update of call id that ends it, as JSON members.
func finalWire(t *testing.T, h *harness, id string) map[string]json.RawMessage {
	t.Helper()
	var last map[string]json.RawMessage
	for _, l := range h.tr.Lines() {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update map[string]json.RawMessage `json:"update"`
			} `json:"params"`
		}
		if l.FromClient || json.Unmarshal(l.Raw, &m) != nil || m.Method != "session/update" {
			continue
		}
		u := m.Params.Update
		if str(u["toolCallId"]) == id && (str(u["status"]) == "completed" || str(u["status"]) == "failed") {
			last = u
		}
	}
	if last == nil {
		t.Fatalf("call %s never ended", id)
	}
	return last
}

// readTurn runs one turn of the recording rec in cwd, allowing each
// permission it asks (pc records them).
func readTurn(t *testing.T, rec, cwd string) (h *harness, pc *permissionClient) {
	t.Helper()
	h = newHarness(t, harnessOpts{replay: rec, cwd: cwd})
	pc = &permissionClient{outcome: "allow-once"}
	h.client.OnRequest = pc.handle
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "read"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	return h, pc
}

// TestReadPathsE2E: a read of a path that names no
// file ("g.md:1-20", a file:// URI) fails and its card ends without a
// location; a relative path that leads out of the cwd is titled with its
// absolute path (and the read, outside the project, asks first).
func TestReadPathsE2E(t *testing.T) {
	t.Parallel()
	h0 := t.TempDir()
	cwd := filepath.Join(h0, "proj")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(h0, "notes.txt")
	for p, c := range map[string]string{filepath.Join(cwd, "g.md"): "# G\n", outside: "outside\n"} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps := [][2]string{
		{"read", `{"file_path":"g.md:1-20"}`},
		{"read", `{"file_path":"file://` + cwd + `/g.md"}`},
		{"read", `{"file_path":"../notes.txt"}`},
		{"read", `{"file_path":"g.md"}`},
	}
	var bodies []string
	for i, s := range steps {
		bodies = append(bodies, e2etest.ToolCallsAt(i, s))
	}
	rec := e2etest.Replay(t, append(bodies, e2etest.Text(nil, []string{"Done."}, "stop"))...)
	id := func(i int) string { return e2etest.CallID(i, 0, steps[i][0], steps[i][1]) }
	h, pc := readTurn(t, rec, cwd)
	checkToolCallsEnd(t, h.sessionUpdates())
	for _, id := range []string{id(0), id(1)} {
		u := finalWire(t, h, id)
		if str(u["status"]) != "failed" || string(u["locations"]) != "[]" {
			t.Errorf("%s ended %s with locations %s, want failed and []", id, u["status"], u["locations"])
		}
	}
	if u := finalWire(t, h, id(3)); str(u["status"]) != "completed" || u["locations"] != nil {
		t.Errorf("a read that worked changed its locations: %s", u["locations"])
	}
	if u := finalWire(t, h, id(2)); str(u["status"]) != "completed" {
		t.Errorf("the outside read ended %s", u["status"])
	}
	titles := 0
	for _, u := range h.sessionUpdates() {
		if c, ok := toolCard(u); ok && c.ToolCallID == id(2) && c.Title != nil && strings.HasPrefix(*c.Title, "Read ") {
			titles++
			if *c.Title != "Read "+outside {
				t.Errorf("title %q, want %q", *c.Title, "Read "+outside)
			}
		}
	}
	if titles == 0 {
		t.Error("the outside read has no Read title")
	}
	if pc.count() != 1 || pc.asked[0].ToolCall.Title == nil || *pc.asked[0].ToolCall.Title != "Read "+outside {
		t.Errorf("permission asked %d times: %+v", pc.count(), pc.asked)
	}
}

// TestSymlinkParentPathE2E: a path whose ".." follows a symlink
// ("link/../secret.txt", link -> elsewhere/sub) names the file the kernel
// opens (elsewhere/secret.txt, outside the project), not the one cleaning
// the text names (proj/secret.txt): the read's cards and its permission
// request name the real file, in the title and the locations, from the
// first tool_call on; the permission step asks about it as outside.
func TestSymlinkParentPathE2E(t *testing.T) {
	t.Parallel()
	h0 := t.TempDir()
	if r, err := filepath.EvalSymlinks(h0); err == nil {
		h0 = r
	}
	cwd := filepath.Join(h0, "proj")
	real := filepath.Join(h0, "elsewhere", "secret.txt")
	for _, d := range []string{cwd, filepath.Join(h0, "elsewhere", "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range map[string]string{real: "outside secret\n", filepath.Join(cwd, "secret.txt"): "inside decoy\n"} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(h0, "elsewhere", "sub"), filepath.Join(cwd, "link")); err != nil {
		t.Fatal(err)
	}
	step := [2]string{"read", `{"file_path":"link/../secret.txt"}`}
	rec := e2etest.Replay(t, e2etest.ToolCallsAt(0, step), e2etest.Text(nil, []string{"Done."}, "stop"))
	id := e2etest.CallID(0, 0, step[0], step[1])
	h, pc := readTurn(t, rec, cwd)
	if u := finalWire(t, h, id); str(u["status"]) != "completed" {
		t.Fatalf("the read ended %s", u["status"])
	}
	cards := 0
	for _, u := range h.sessionUpdates() {
		c, ok := toolCard(u)
		if !ok || c.ToolCallID != id {
			continue
		}
		cards++
		if c.Title != nil && *c.Title != "Read "+real {
			t.Errorf("title %q, want %q", *c.Title, "Read "+real)
		}
		for _, l := range c.Locations {
			if l.Path != real {
				t.Errorf("location %q, want %q", l.Path, real)
			}
		}
	}
	if cards == 0 {
		t.Fatal("no card for the read")
	}
	if pc.count() != 1 {
		t.Fatalf("permission asked %d times, want once (outside the project)", pc.count())
	}
	tc := pc.asked[0].ToolCall
	if tc.Title == nil || *tc.Title != "Read "+real || len(tc.Locations) != 1 || tc.Locations[0].Path != real {
		raw, _ := json.Marshal(tc)
		t.Errorf("permission request's tool call %s, want the real file %s", raw, real)
	}
}

// TestResourceLinkPathE2E (item 12): a resource_link to a file reaches
// the model as the decoded path, with Zed's selection as lines.
func TestResourceLinkPathE2E(t *testing.T) {
	t.Parallel()
	f, mb := scriptedModel(t, e2etest.Text(nil, []string{"Seen."}, "stop"))
	h := newHarness(t, harnessOpts{model: f.client("k")})
	sid := h.start(harnessOpts{})
	uri := "file://" + filepath.ToSlash(h.cwd) + "/my%20notes/r%C3%A9sum%C3%A9.md#L3:9"
	var pr acp.PromptResponse
	h.mustCall("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{
		map[string]any{"type": "text", "text": "look at"},
		map[string]any{"type": "resource_link", "name": "résumé.md", "uri": uri},
	}}, &pr)
	if pr.StopReason != acp.StopEndTurn {
		t.Fatalf("stop %q", pr.StopReason)
	}
	var user string
	for _, m := range messagesOf(t, mb.body(1)) {
		if m["role"] == "user" {
			b, _ := json.Marshal(m["content"])
			user += string(b)
		}
	}
	want := `path=\"` + h.cwd + `/my notes/résumé.md\" lines=\"3-9\"`
	if !strings.Contains(user, want) || strings.Contains(user, "%20") {
		t.Errorf("the model got %s, want it to hold %s", user, want)
	}
}
