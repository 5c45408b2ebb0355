package llm

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixtureBody loads a recorded NNN.request.json without its "_" keys.
func fixtureBody(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(readFile(t, path), &m); err != nil {
		t.Fatal(err)
	}
	for k := range m {
		if strings.HasPrefix(k, "_") {
			delete(m, k)
		}
	}
	return m
}

func decodeBody(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, b)
	}
	return m
}

func parseFile(t *testing.T, path string) *Response {
	t.Helper()
	res, err := ParseStream(bytes.NewReader(readFile(t, path)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSerializeToolCallTurn: the request after a tool call, built from
// the recorded response, is the recording's 002.request.json: the
// reasoning passed back with the tool call, then the tool result.
func TestSerializeToolCallTurn(t *testing.T) {
	forEachSource(t, func(t *testing.T, root string) {
		dir := filepath.Join(root, "tool-call-turn")
		want := fixtureBody(t, filepath.Join(dir, "002.request.json"))
		msgs := want["messages"].([]any)
		user := msgs[0].(map[string]any)["content"].(string)
		toolOut := msgs[2].(map[string]any)["content"].(string)

		first := parseFile(t, filepath.Join(dir, "001.sse"))
		if first.Reasoning == "" || len(first.ToolCalls) != 1 {
			t.Fatalf("001.sse: reasoning %q, tool calls %+v; the test needs reasoning and one call", first.Reasoning, first.ToolCalls)
		}
		req := Request{
			Model: want["model"].(string),
			Messages: []Message{
				{Role: "user", Content: user},
				{Role: "assistant", Content: first.Text, Reasoning: first.Reasoning, ToolCalls: first.ToolCalls},
				{Role: "tool", ToolCallID: first.ToolCalls[0].ID, Content: toolOut},
			},
		}
		body, err := MarshalRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := decodeBody(t, body); !reflect.DeepEqual(got, want) {
			t.Fatalf("body differs\n got: %s\nwant: %v", body, want)
		}
	})
}

// TestSerializeMultiTurn: the second turn's request is the recording's
// 002.request.json: the first answer goes back without its reasoning.
func TestSerializeMultiTurn(t *testing.T) {
	forEachSource(t, func(t *testing.T, root string) {
		dir := filepath.Join(root, "multi-turn")
		want := fixtureBody(t, filepath.Join(dir, "002.request.json"))
		msgs := want["messages"].([]any)
		first := parseFile(t, filepath.Join(dir, "001.sse"))
		if first.Reasoning == "" {
			t.Fatal("001.sse has no reasoning; the test needs some to check it is dropped")
		}
		req := Request{
			Model: want["model"].(string),
			Messages: []Message{
				{Role: "user", Content: msgs[0].(map[string]any)["content"].(string)},
				// The caller keeps the reasoning; the serializer must drop it.
				{Role: "assistant", Content: first.Text, Reasoning: first.Reasoning},
				{Role: "user", Content: msgs[2].(map[string]any)["content"].(string)},
			},
		}
		body, err := MarshalRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := decodeBody(t, body); !reflect.DeepEqual(got, want) {
			t.Fatalf("body differs\n got: %s\nwant: %v", body, want)
		}
	})
}

func TestMessageWireForm(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		want string
	}{
		{"system", Message{Role: "system", Content: "be brief"}, `{"role":"system","content":"be brief"}`},
		{"empty user", Message{Role: "user"}, `{"role":"user","content":""}`},
		{"assistant text", Message{Role: "assistant", Content: "hi", Reasoning: "think"}, `{"role":"assistant","content":"hi"}`},
		{"assistant nothing", Message{Role: "assistant", Reasoning: "think"}, `{"role":"assistant","content":null}`},
		{"assistant tool call no reasoning", Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "read", Arguments: `{"a": 1}`}}},
			`{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"a\": 1}"}}]}`},
		{"assistant text tool call reasoning", Message{Role: "assistant", Content: "ok", Reasoning: "r", ToolCalls: []ToolCall{{ID: "c1", Name: "x", Arguments: `{"s":"<a&b>\u00e9"}`}, {ID: "c2", Name: "y", Arguments: ""}}},
			`{"role":"assistant","content":"ok","reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"x","arguments":"{\"s\":\"<a&b>\\u00e9\"}"}},{"id":"c2","type":"function","function":{"name":"y","arguments":""}}]}`},
		{"tool", Message{Role: "tool", ToolCallID: "c1", Content: "out\n"}, `{"role":"tool","tool_call_id":"c1","content":"out\n"}`},
		{"tool empty", Message{Role: "tool", ToolCallID: "c1"}, `{"role":"tool","tool_call_id":"c1","content":"(no output)"}`},
	}
	for _, tt := range tests {
		got, err := tt.msg.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestArgumentsByteForByte(t *testing.T) {
	args := "{\"path\": \"a<b>&c.txt\",\n  \"text\": \"日本 \\\"q\\\"\"}"
	body, err := MarshalRequest(Request{Messages: []Message{{Role: "assistant", ToolCalls: []ToolCall{{ID: "i", Name: "n", Arguments: args}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Messages []Message `json:"messages"`
	}
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Messages[0].ToolCalls[0].Arguments; got != args {
		t.Fatalf("arguments changed: %q", got)
	}
	if bytes.Contains(body, []byte(`\u003c`)) {
		t.Fatalf("HTML-escaped body: %s", body)
	}
}

func TestRequestTools(t *testing.T) {
	body, err := MarshalRequest(Request{Model: "m", Messages: []Message{{Role: "user", Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":true}}`
	if string(body) != want {
		t.Fatalf("got %s", body)
	}
	strict := true
	body, err = MarshalRequest(Request{Model: "m", Tools: []ToolSchema{
		{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`), Strict: &strict},
		{Name: "noop"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want = `{"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true},"tools":[` +
		`{"type":"function","function":{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]},"strict":true}},` +
		`{"type":"function","function":{"name":"noop","parameters":{"type":"object","properties":{}}}}]}`
	if string(body) != want {
		t.Fatalf("got  %s\nwant %s", body, want)
	}
	if _, err := MarshalRequest(Request{Tools: []ToolSchema{{Name: "bad", Parameters: json.RawMessage(`{`)}}}); err == nil {
		t.Fatal("invalid parameters accepted")
	}
}

// TestRequestMaxTokens: max_tokens goes out only when set, after the
// (absent) tools; a negative value is left out like 0.
func TestRequestMaxTokens(t *testing.T) {
	for n, want := range map[int]string{
		48: `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":48}`,
		0:  `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":true}}`,
		-1: `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":true}}`,
	} {
		body, err := MarshalRequest(Request{Model: "m", Messages: []Message{{Role: "user", Content: "x"}}, MaxTokens: n})
		if err != nil || string(body) != want {
			t.Errorf("MaxTokens %d: %s, %v\nwant %s", n, body, err, want)
		}
	}
}

func TestMessageRoundTrip(t *testing.T) {
	in := []Message{
		{Role: "system", Content: "s"},
		{Role: "user", Content: "u"},
		{Role: "assistant", Content: "", Reasoning: "r", ToolCalls: []ToolCall{{ID: "c", Name: "n", Arguments: "{}"}}},
		{Role: "tool", ToolCallID: "c", Content: "out"},
		{Role: "assistant", Content: "done"},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out []Message
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n in %+v\nout %+v", in, out)
	}
}
