package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

func evs(ds ...session.Data) []session.Event {
	out := make([]session.Event, len(ds))
	for i, d := range ds {
		out[i] = session.Event{Seq: int64(i), Data: d}
	}
	return out
}

// TestHistory: the model conversation pairs every tool call with its
// result, keeps reasoning on tool-call messages, and drops results of
// calls cut off mid-stream.
func TestHistory(t *testing.T) {
	events := evs(
		session.UserMessage{Content: []tools.Content{tools.Text("read a")}},
		session.AssistantMessage{Reasoning: "need to read", ToolCalls: []session.ToolCallRef{{CallID: "c1", Name: "read", Arguments: `{"file_path":"a"}`}, {CallID: "c2", Name: "read", Arguments: `{}`}}},
		session.ToolResult{CallID: "c1", Content: []tools.Content{tools.Text("1: x")}},
		session.ToolResult{CallID: "orphan", Content: []tools.Content{tools.Text("cut")}},
		session.AssistantMessage{Text: "done", Reasoning: "ok"},
		session.AssistantMessage{},
	)
	b, _ := json.Marshal(History(events, false))
	want := `[{"role":"user","content":"read a"},` +
		`{"role":"assistant","content":"","reasoning_content":"need to read","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"file_path\":\"a\"}"}},{"id":"c2","type":"function","function":{"name":"read","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"1: x"},` +
		`{"role":"tool","tool_call_id":"c2","content":"Error: tool call interrupted; no result was recorded."},` +
		`{"role":"assistant","content":"done"}]`
	if string(b) != want {
		t.Errorf("history\n got %s\nwant %s", b, want)
	}
}

// TestClaimID: the model's id is used once per session; repeats and empty
// ids get fresh call_ ids.
func TestClaimID(t *testing.T) {
	s := NewSession(session.NewStore(nil), tools.NewSession("s", "/"))
	if got := s.claimID("call_00_a"); got != "call_00_a" {
		t.Errorf("first = %q", got)
	}
	second := s.claimID("call_00_a")
	if second == "call_00_a" || len(second) != len("call_")+24 {
		t.Errorf("repeat = %q", second)
	}
	if got := s.claimID(""); got == "" || got == second {
		t.Errorf("empty = %q", got)
	}
}

// TestHistoryImages: a user message with images is a content array of
// its texts (adjacent ones joined) and images (data URLs) in order for a
// model that takes images, and text with each image's text form for one
// that does not; the agent asks its Meter about the session's model.
func TestHistoryImages(t *testing.T) {
	events := evs(session.UserMessage{Content: []tools.Content{
		tools.Text("What is "), tools.Text("this?"), tools.Image("iVBORw0KGgo=", "image/png"), tools.Text("And this?"), tools.Image("R0lGOD==", "image/gif"),
	}})
	b, _ := json.Marshal(History(events, true))
	want := `[{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},` +
		`{"type":"text","text":"And this?"},{"type":"image_url","image_url":{"url":"data:image/gif;base64,R0lGOD=="}}]}]`
	if string(b) != want {
		t.Errorf("with images\n got %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(History(events, false))
	if want := `[{"role":"user","content":"What is this?[image: image/png, 8 bytes]And this?[image: image/gif, 4 bytes]"}]`; string(b) != want {
		t.Errorf("without images\n got %s\nwant %s", b, want)
	}

	// The session's model decides (here m2, chosen over the default m1,
	// which says the opposite).
	for _, takes := range []bool{false, true} {
		client := &scripted{resps: []*llm.Response{{Text: "ok", FinishReason: "stop"}}}
		meter := &llm.Meter{Catalog: llm.Catalog{Models: map[string]llm.Known{"m1": {Images: !takes}, "m2": {Images: takes}}}}
		a := New(Config{Client: client, Tools: tools.NewRegistry(), Model: "m1", Meter: meter})
		s := NewSession(session.NewStore(nil), tools.NewSession("s", t.TempDir()))
		s.SetSettings(Settings{Model: "m2"})
		a.Turn(context.Background(), s, []tools.Content{tools.Text("look"), tools.Image("iVBORw0KGgo=", "image/png")}, "")
		user := client.reqs[0].Messages[1]
		if (len(user.Parts) == 2) != takes || (user.Content == "look[image: image/png, 8 bytes]") == takes {
			t.Errorf("m2 takes images %v: user message %+v", takes, user)
		}
	}
}

// TestBoundImages: a request's images stay within MaxRequestImageBytes,
// the newest kept: an older one past the bound becomes a text part.
func TestBoundImages(t *testing.T) {
	big := strings.Repeat("A", MaxRequestImageBytes/3)
	img := llm.ImagePart("image/png", big)
	msgs := []llm.Message{
		{Role: "user", Parts: []llm.Part{{Text: "old"}, img}},
		{Role: "user", Parts: []llm.Part{img, img}},
		{Role: "user", Parts: []llm.Part{img}},
	}
	out := boundImages(msgs)
	kept := 0
	for _, m := range out {
		for _, p := range m.Parts {
			if p.ImageURL != "" {
				kept++
			}
		}
	}
	if kept != 2 || out[2].Parts[0].ImageURL == "" || out[1].Parts[1].ImageURL == "" ||
		out[1].Parts[0].ImageURL != "" || !strings.Contains(out[0].Parts[1].Text, "left out") {
		t.Errorf("kept %d images: %+v", kept, out)
	}
}

// TestToolResultImages: the images of a step's tool results (an MCP
// tool's after its text, a read's inside its envelope) follow the
// step's tool messages in one user message for a model that takes
// images, each after a line naming its call, and the tool messages say
// so; a text-only model gets a note in their place and no image.
func TestToolResultImages(t *testing.T) {
	const png1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	img := tools.Image(png1x1, "image/png")
	events := evs(
		session.UserMessage{Content: []tools.Content{tools.Text("look")}},
		session.AssistantMessage{Reasoning: "two tools", ToolCalls: []session.ToolCallRef{{CallID: "m1", Name: "mcp__shot__take"}, {CallID: "r1", Name: "read"}}},
		session.ToolResult{CallID: "m1", Content: []tools.Content{tools.Text("screenshot taken"), img}},
		session.ToolResult{CallID: "r1", Content: []tools.Content{tools.Text("<path>/p/dot.png</path>\n<type>image</type>\n<content>\n"), img, tools.Text("\n</content>")}},
	)
	b, _ := json.Marshal(History(events, true))
	url := `data:image/png;base64,` + png1x1
	want := `[{"role":"user","content":"look"},` +
		`{"role":"assistant","content":"","reasoning_content":"two tools","tool_calls":[{"id":"m1","type":"function","function":{"name":"mcp__shot__take","arguments":""}},{"id":"r1","type":"function","function":{"name":"read","arguments":""}}]},` +
		`{"role":"tool","tool_call_id":"m1","content":"screenshot taken\n[image: 1×1 PNG, 70 bytes — sent in the next message]"},` +
		`{"role":"tool","tool_call_id":"r1","content":"\u003cpath\u003e/p/dot.png\u003c/path\u003e\n\u003ctype\u003eimage\u003c/type\u003e\n\u003ccontent\u003e\n[image: 1×1 PNG, 70 bytes — sent in the next message]\n\u003c/content\u003e"},` +
		`{"role":"user","content":[{"type":"text","text":"The image returned by tool call m1:"},{"type":"image_url","image_url":{"url":"` + url + `"}},` +
		`{"type":"text","text":"The image returned by tool call r1:"},{"type":"image_url","image_url":{"url":"` + url + `"}}]}]`
	if got := unescape(string(b)); got != unescape(want) {
		t.Errorf("with images\n got %s\nwant %s", got, unescape(want))
	}
	b, _ = json.Marshal(History(events, false))
	got := string(b)
	if strings.Contains(got, "image_url") || strings.Count(got, "[image: 1×1 PNG, 70 bytes — model takes no images]") != 2 {
		t.Errorf("text only: %s", got)
	}
}

// unescape undoes json.Marshal's HTML escapes, for comparing texts.
func unescape(s string) string {
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(s)
}
