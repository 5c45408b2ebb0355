package llm

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

var parallelWantDeltas = []Delta{
	{Kind: DeltaReasoning, Text: "Read 日本"},
	{Kind: DeltaReasoning, Text: " two files."},
	{Kind: DeltaText, Text: "Reading both."},
	{Kind: DeltaToolCall, Index: 1, ID: "call_b", Name: "read"},
	{Kind: DeltaToolCall, Index: 0, ID: "call_a", Name: "read"},
	{Kind: DeltaToolArgs, Index: 0, Text: `{"file`},
	{Kind: DeltaToolArgs, Index: 1, Text: `{"file_path"`},
	{Kind: DeltaToolArgs, Index: 0, Text: `_path": "a.txt"}`},
	{Kind: DeltaToolCall, Index: 2, ID: "call_c", Name: "bash"},
	{Kind: DeltaToolArgs, Index: 2, Text: `{"command":"echo 日"}`},
	{Kind: DeltaToolArgs, Index: 1, Text: `: "b.txt"}`},
}

var parallelWantResp = &Response{
	Reasoning: "Read 日本 two files.",
	Text:      "Reading both.",
	ToolCalls: []ToolCall{
		{ID: "call_a", Name: "read", Arguments: `{"file_path": "a.txt"}`},
		{ID: "call_b", Name: "read", Arguments: `{"file_path": "b.txt"}`},
		{ID: "call_c", Name: "bash", Arguments: `{"command":"echo 日"}`},
	},
	FinishReason: "tool_calls",
	Usage:        &Usage{PromptTokens: 283, CompletionTokens: 69, TotalTokens: 352, CacheHitTokens: 256, ReasoningTokens: 24},
}

func TestParseParallelToolCalls(t *testing.T) {
	data := readFile(t, filepath.Join("testdata", "parallel.sse"))
	want := result{Deltas: parallelWantDeltas, Resp: parallelWantResp}
	sameResult(t, "whole", parse(bytes.NewReader(data)), want)
	sameResult(t, "one byte reads", parse(iotest.OneByteReader(bytes.NewReader(data))), want)
	crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	sameResult(t, "crlf", parse(bytes.NewReader(crlf)), want)
	for _, d := range [][]byte{data, crlf} {
		for i := 0; i <= len(d); i++ {
			got := parse(splitAt(d, i))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("split at byte %d of %d (%q|%q): got %+v", i, len(d), d[max(0, i-8):i], d[i:min(len(d), i+8)], got)
			}
		}
	}
}

// TestParseEverySplitOfFixture: a recorded stream cut at any byte into
// two reads parses as it does whole.
func TestParseEverySplitOfFixture(t *testing.T) {
	forEachSource(t, func(t *testing.T, root string) {
		data := readFile(t, filepath.Join(root, "text-turn", "001.sse"))
		want := parse(bytes.NewReader(data))
		if want.Code != "" || want.Resp.Text == "" || want.Resp.Reasoning == "" || want.Resp.Usage == nil {
			t.Fatalf("text-turn/001.sse: %+v", want)
		}
		for i := 0; i <= len(data); i++ {
			got := parse(splitAt(data, i))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("split at byte %d: got %+v", i, got)
			}
		}
		sameResult(t, "one byte reads", parse(iotest.OneByteReader(bytes.NewReader(data))), want)
	})
}

func TestParseUTF8SplitInsideCharacter(t *testing.T) {
	data := []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"日\"}}]}\n\ndata: [DONE]\n\n")
	i := bytes.Index(data, []byte("日")) + 1 // inside the 3-byte character
	got := parse(splitAt(data, i, i+1))
	if got.Code != "" || got.Resp.Text != "日" || len(got.Deltas) != 1 || got.Deltas[0].Text != "日" {
		t.Fatalf("got %+v", got)
	}
}

func TestParseFraming(t *testing.T) {
	text := func(s string) string {
		return `data: {"choices":[{"index":0,"delta":{"content":"` + s + `"}}]}`
	}
	tests := []struct {
		name, body string
		text       string // want Response.Text
		code       string // want error code, "" for none
		msgHas     string
	}{
		{"done only", "data: [DONE]\n\n", "", "", ""},
		{"done without blank line", text("a") + "\n\ndata: [DONE]", "a", "", ""},
		{"done without newline after crlf events", text("a") + "\r\n\r\ndata:[DONE]\r", "a", "", ""},
		{"done with one newline", text("a") + "\n\ndata: [DONE]\n", "a", "", ""},
		{"no space after colon", `data:{"choices":[{"index":0,"delta":{"content":"x"}}]}` + "\n\ndata:[DONE]\n\n", "x", "", ""},
		{"keep-alives and other fields", ": keep-alive\n\n: keep-alive\nevent: chunk\nid: 7\nretry: 10\n" + text("k") + "\n\n: x\n\ndata: [DONE]\n\n", "k", "", ""},
		{"event without data yields nothing", "event: ping\n\nid: 3\n\n" + text("y") + "\n\ndata: [DONE]\n\n", "y", "", ""},
		{"multiple data lines joined with newline", "data: {\"choices\":[{\"index\":0,\n" + `data: "delta":{"content":"m"}}]}` + "\n\ndata: [DONE]\n\n", "m", "", ""},
		{"several events in one read", text("a") + "\n\n" + text("b") + "\n\n" + text("c") + "\n\ndata: [DONE]\n\n", "abc", "", ""},
		{"empty object chunk", "data: {}\n\n" + text("z") + "\n\ndata: [DONE]\n\n", "z", "", ""},
		{"empty choices", `data: {"choices":[]}` + "\n\ndata: [DONE]\n\n", "", "", ""},
		{"null choices and usage", `data: {"choices":null,"usage":null}` + "\n\ndata: [DONE]\n\n", "", "", ""},
		{"empty data event ignored", "data:\n\n" + text("e") + "\n\ndata: [DONE]\n\n", "e", "", ""},
		{"anything after done ignored", text("a") + "\n\ndata: [DONE]\n\ndata: {bad json\n\n", "a", "", ""},
		{"other choice index ignored", `data: {"choices":[{"index":1,"delta":{"content":"no"}},{"index":0,"delta":{"content":"yes"}}]}` + "\n\ndata: [DONE]\n\n", "yes", "", ""},
		{"empty body", "", "", CodeStreamClosed, "no [DONE]"},
		{"closed after complete event", text("a") + "\n\n", "a", CodeStreamClosed, "cut off"},
		{"closed inside event", text("a") + "\n\n" + `data: {"choices":[{"index":0,"delta":{"conte`, "a", CodeStreamClosed, "cut off"},
		{"closed inside done", text("a") + "\n\ndata: [DO", "a", CodeStreamClosed, "cut off"},
		{"closed after comments only", ": keep-alive\n\n", "", CodeStreamClosed, "no [DONE]"},
		{"bad json", text("a") + "\n\ndata: {\"choices\": [\n\ndata: [DONE]\n\n", "a", CodeMalformed, "unreadable"},
		{"not an object", "data: [1,2]\n\ndata: [DONE]\n\n", "", CodeMalformed, ""},
		{"wrong field type", `data: {"choices":[{"index":0,"delta":{"content":5}}]}` + "\n\ndata: [DONE]\n\n", "", CodeMalformed, ""},
		{"error object in stream", text("a") + "\n\n" + `data: {"error":{"message":"Overloaded, try later","type":"server_error"}}` + "\n\ndata: [DONE]\n\n", "a", CodeStreamError, "Overloaded, try later"},
		{"json error body instead of stream", `{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}`, "", CodeStreamError, "Insufficient Balance"},
		{"plain text body", "Bad Gateway", "", CodeStreamClosed, "not an event stream: Bad Gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ParseStream(strings.NewReader(tt.body), nil)
			if got := errCode(err); got != tt.code {
				t.Fatalf("code %q (err %v), want %q", got, err, tt.code)
			}
			if err != nil && !strings.Contains(err.Error(), tt.msgHas) {
				t.Fatalf("message %q lacks %q", err.Error(), tt.msgHas)
			}
			if res == nil {
				t.Fatal("nil response")
			}
			if res.Text != tt.text {
				t.Fatalf("text %q, want %q", res.Text, tt.text)
			}
			if err == nil && res.FinishReason != "stop" {
				t.Fatalf("finish %q, want default stop", res.FinishReason)
			}
			// The same through one-byte reads.
			res2, err2 := ParseStream(iotest.OneByteReader(strings.NewReader(tt.body)), nil)
			if errCode(err2) != tt.code || res2.Text != tt.text {
				t.Fatalf("one-byte reads: %v %+v", err2, res2)
			}
		})
	}
}

func TestParseFinishUsageAndFragments(t *testing.T) {
	body := `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"id":"late","function":{}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"name":"named_later"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11,"prompt_cache_hit_tokens":2}}

data: {"choices":[{"index":0,"delta":{},"finish_reason":null}],"usage":null}

data: [DONE]

`
	var deltas []Delta
	res, err := ParseStream(strings.NewReader(body), func(d Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	want := &Response{
		ToolCalls:    []ToolCall{{Arguments: "{}"}, {ID: "late", Name: "named_later"}},
		FinishReason: "length",
		Usage:        &Usage{PromptTokens: 5, CompletionTokens: 6, TotalTokens: 11, CacheHitTokens: 2},
	}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("got %+v\nwant %+v", res, want)
	}
	wantDeltas := []Delta{
		{Kind: DeltaToolCall, Index: 0},
		{Kind: DeltaToolArgs, Index: 0, Text: "{}"},
		{Kind: DeltaToolCall, Index: 3, ID: "late"},
	}
	if !reflect.DeepEqual(deltas, wantDeltas) {
		t.Fatalf("deltas %+v", deltas)
	}
}

func TestParseToolCallsWithoutIndex(t *testing.T) {
	body := `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{\"p\":"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"y","arguments":"{}"}}]}}]}

data: [DONE]

`
	res, err := ParseStream(strings.NewReader(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{{ID: "a", Name: "x", Arguments: `{"p":1}`}, {ID: "b", Name: "y", Arguments: "{}"}}
	if !reflect.DeepEqual(res.ToolCalls, want) {
		t.Fatalf("got %+v", res.ToolCalls)
	}
}

func TestParseReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader(`data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}`+"\n\n"), iotest.ErrReader(boom))
	res, err := ParseStream(r, nil)
	if errCode(err) != CodeStreamClosed || !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if res == nil || res.Text != "hi" {
		t.Fatalf("partial response %+v", res)
	}
}

// TestParseDeliversDeltasAsTheyArrive feeds the stream through a pipe and
// checks each delta is seen before the next event is even written.
func TestParseDeliversDeltasAsTheyArrive(t *testing.T) {
	pr, pw := io.Pipe()
	got := make(chan Delta, 10)
	done := make(chan error, 1)
	go func() {
		_, err := ParseStream(pr, func(d Delta) { got <- d })
		done <- err
	}()
	for _, piece := range []string{"one", "two", "three"} {
		ev := `data: {"choices":[{"index":0,"delta":{"reasoning_content":"` + piece + `"}}]}` + "\n\n"
		if _, err := pw.Write([]byte(ev)); err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-got:
			if d.Kind != DeltaReasoning || d.Text != piece {
				t.Fatalf("delta %+v, want reasoning %q", d, piece)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("delta %q not delivered while the stream is open", piece)
		}
	}
	_, _ = pw.Write([]byte("data: [DONE]\n\n"))
	_ = pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		status int
		body   string
		code   string
		msg    string
	}{
		{400, `{"error":{"message":"bad messages"}}`, CodeInvalidRequest, "bad messages (HTTP 400)"},
		{401, `{"error":{"message":"Authentication Fails"}}`, CodeAuth, "Authentication Fails (HTTP 401); check the API key in DSH_API_KEY or DEEPSEEK_API_KEY"},
		{403, ``, CodeAuth, "model endpoint error (HTTP 403); check the API key in DSH_API_KEY or DEEPSEEK_API_KEY"},
		{402, `{"error":{"message":"Insufficient Balance"}}`, "HTTP_402", "Insufficient Balance (HTTP 402)"},
		{422, `{"error":{}}`, "HTTP_422", "model endpoint error (HTTP 422)"},
		{429, `{"error":{"message":"slow down"}}`, CodeRateLimit, "slow down (HTTP 429)"},
		{502, `Bad Gateway`, CodeServer, "model endpoint error (HTTP 502)"},
	}
	for _, tt := range tests {
		e := httpError(tt.status, []byte(tt.body))
		if e.Code != tt.code || e.Error() != tt.msg || e.Status != tt.status {
			t.Errorf("%d: got %q %q", tt.status, e.Code, e.Error())
		}
		if want := tt.status == 429 || tt.status >= 500; e.Retryable != want {
			t.Errorf("%d: retryable %v", tt.status, e.Retryable)
		}
	}
}

func TestParseEventTooLarge(t *testing.T) {
	const limit = 100
	ok := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"fits\"}}]}\n\n"
	tests := map[string]string{
		"long unfinished line":  ok + "data: \"" + strings.Repeat("a", limit),
		"long finished line":    ok + "data: \"" + strings.Repeat("a", limit) + "\n\ndata: [DONE]\n\n",
		"long comment":          ok + ": " + strings.Repeat("k", limit) + "\n\ndata: [DONE]\n\n",
		"many short data lines": ok + strings.Repeat("data: 0123456789\n", 12) + "\ndata: [DONE]\n\n",
	}
	for name, body := range tests {
		for _, r := range []io.Reader{strings.NewReader(body), iotest.OneByteReader(strings.NewReader(body))} {
			res, err := parseStream(r, nil, limit)
			if errCode(err) != CodeMalformed || !errors.Is(err, errEventTooLarge) || res.Text != "fits" {
				t.Fatalf("%s: err %v, text %q", name, err, res.Text)
			}
		}
	}
	if res, err := parseStream(strings.NewReader(ok+"data: [DONE]\n\n"), nil, limit); err != nil || res.Text != "fits" {
		t.Fatalf("short events refused: %v", err)
	}
}
