package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acpclient"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/server"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts under testdata/golden")

// TestTextTurnGolden runs a thought-then-answer turn from a recording of
// our own and compares the whole JSON-RPC transcript with its golden file.
func TestTextTurnGolden(t *testing.T) {
	rec := e2etest.Replay(t, e2etest.Text([]string{"Think", "ing."}, []string{"PO", "NG"}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec})
	sid := h.start(harnessOpts{info: map[string]string{"name": "test-client", "version": "1"}})
	stop, err := h.prompt(sid, "Reply with exactly the word: PONG")
	if err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v; want end_turn", stop, err)
	}
	us := h.sessionUpdates()
	if got := joined(us, acp.UpdateAgentMessageChunk); got != "PONG" {
		t.Errorf("message = %q, want PONG", got)
	}
	if got := joined(us, acp.UpdateAgentThoughtChunk); got != "Thinking." {
		t.Errorf("thoughts = %q, want Thinking.", got)
	}
	checkGolden(t, "text-turn", h, sid)
}

// checkGolden compares the transcript, with the session id and cwd
// normalised, with testdata/golden/NAME.jsonl (-update rewrites it).
func checkGolden(t *testing.T, name string, h *harness, sid string) {
	t.Helper()
	var b bytes.Buffer
	for _, l := range h.tr.Lines() {
		dir := "<-"
		if l.FromClient {
			dir = "->"
		}
		line := strings.ReplaceAll(string(l.Raw), sid, "{{sessionId}}")
		line = strings.ReplaceAll(line, h.cwd, "{{cwd}}")
		line = versionRE.ReplaceAllString(line, `"version":"{{version}}"`)
		fmt.Fprintf(&b, "%s %s\n", dir, line)
	}
	path := filepath.Join("testdata", "golden", name+".jsonl")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./server -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Errorf("transcript differs from %s (rerun with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, b.String(), want)
	}
}

var versionRE = regexp.MustCompile(`"version":"` + regexp.QuoteMeta(testVersion) + `"`)

// TestInitialize checks the capabilities the agent tells the editor.
func TestInitialize(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	var got map[string]any
	h.mustCall("initialize", map[string]any{"protocolVersion": 7}, &got)
	want := `{"agentCapabilities":{"_meta":{"promptQueueing":true},"auth":{"logout":{},"status":{}},"loadSession":true,"mcpCapabilities":{"http":true,"sse":true},"promptCapabilities":{"audio":false,"embeddedContext":true,"image":false},"sessionCapabilities":{"additionalDirectories":{},"archive":{},"close":{},"delete":{},"fork":{},"list":{},"resume":{},"status":{},"systemPrompt":{"mode":{"override":{}}},"title":{}}},"agentInfo":{"name":"dsh-acp","title":"dsh-acp (DeepSeek)","version":"` + testVersion + `"},` +
		`"authMethods":[{"_meta":{"terminal-auth":{"args":["login"],"command":"` + testExecutable + `","label":"dsh-acp login"}},"description":"` + loginDescription + `","id":"login","name":"Log in with an API key"}],"protocolVersion":1}`
	b, _ := json.Marshal(got)
	if string(b) != want {
		t.Errorf("initialize result\n got %s\nwant %s", b, want)
	}
}

// rpcError sends a request and returns its JSON-RPC error code (0 when it
// succeeded).
func rpcError(t *testing.T, h *harness, method string, params any) (int, string) {
	t.Helper()
	err := h.call(method, params, nil)
	if err == nil {
		return 0, ""
	}
	var e *acp.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: not a JSON-RPC error: %v", method, err)
	}
	return e.Code, e.Message
}

// TestErrorTable covers the protocol errors (JSON-RPC codes and
// messages) that need no model.
func TestErrorTable(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	sid := h.start(harnessOpts{})
	image := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"}}}
	audio := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}}}
	cases := []struct {
		name, method string
		params       any
		code         int
		msg          string
	}{
		{"unknown method", "session/fly", map[string]any{}, acp.CodeMethodNotFound, "session/fly"},
		{"missing params", "session/new", nil, acp.CodeInvalidParams, "missing params"},
		{"invalid params", "session/new", map[string]any{"cwd": 5}, acp.CodeInvalidParams, "Invalid params"},
		{"missing cwd", "session/new", map[string]any{"cwd": "/no/such/dir", "mcpServers": []any{}}, acp.CodeInvalidParams, "not a directory"},
		{"relative cwd", "session/new", map[string]any{"cwd": "proj", "mcpServers": []any{}}, acp.CodeInvalidParams, "absolute"},
		{"unsupported block", "session/prompt", audio, acp.CodeInvalidParams, `unsupported content block type "audio"`},
		{"image for a text-only model", "session/prompt", image, acp.CodeInvalidParams, "the model deepseek-chat does not take images"},
		{"empty prompt", "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{}}, acp.CodeInvalidParams, "empty"},
		{"blank prompt", "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "  "}}}, acp.CodeInvalidParams, "empty"},
		{"unknown auth method", "authenticate", map[string]any{"methodId": "oauth"}, acp.CodeInvalidParams, "oauth"},
		{"unknown session prompt", "session/prompt", map[string]any{"sessionId": "nope", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, acp.CodeResourceNotFound, "nope"},
		{"unknown session close", "session/close", map[string]any{"sessionId": "nope"}, acp.CodeResourceNotFound, "nope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, msg := rpcError(t, h, c.method, c.params)
			if code != c.code || !strings.Contains(msg, c.msg) {
				t.Errorf("%s: got %d %q, want %d containing %q", c.method, code, msg, c.code, c.msg)
			}
		})
	}
}

// TestBadLines sends lines that are not valid messages: each is answered
// with id null and the connection keeps serving.
func TestBadLines(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	cases := []struct {
		line string
		code int
	}{
		{`{not json`, acp.CodeParseError},
		{`Content-Length: 12`, acp.CodeParseError},
		{`42`, acp.CodeInvalidRequest},
		{`[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`, acp.CodeInvalidRequest},
		{`{"jsonrpc":"2.0"}`, acp.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":-1,"method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":1}}`, acp.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}`, acp.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":3,"method":7}`, acp.CodeInvalidRequest},
	}
	for _, c := range cases {
		if err := h.client.WriteLine([]byte(c.line)); err != nil {
			t.Fatal(err)
		}
	}
	// Unknown notifications are ignored; a response we never asked for is
	// dropped without an answer.
	_ = h.client.WriteLine([]byte(`{"jsonrpc":"2.0","method":"_vendor/ping","params":{}}`))
	_ = h.client.WriteLine([]byte(`{"jsonrpc":"2.0","id":99,"result":{}}`))
	_ = h.client.WriteLine([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`))
	h.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	var codes []int
	for _, l := range h.tr.AgentLines() {
		var m struct {
			ID    json.RawMessage
			Error *acp.Error
		}
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("agent wrote a line that is not JSON: %s", l)
		}
		if m.Error != nil {
			if string(m.ID) != "null" {
				t.Errorf("error for a bad line has id %s, want null", m.ID)
			}
			codes = append(codes, m.Error.Code)
		}
	}
	if len(codes) != len(cases) {
		t.Fatalf("got %d error responses %v, want %d", len(codes), codes, len(cases))
	}
	for i, c := range cases {
		if codes[i] != c.code {
			t.Errorf("line %q answered %d, want %d", c.line, codes[i], c.code)
		}
	}
}

// promptLine is a session/prompt request for sid with id, its text made
// of fill bytes so that the line (without its newline) is exactly n bytes;
// text is the text's length.
func promptLine(t *testing.T, id int, sid string, fill byte, n int) (line []byte, text int) {
	t.Helper()
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"`, id, sid)
	const tail = `"}]}}`
	k := n - len(head) - len(tail)
	if k < 0 {
		t.Fatalf("a line of %d bytes cannot hold a prompt", n)
	}
	b := make([]byte, 0, n)
	b = append(b, head...)
	b = append(b, bytes.Repeat([]byte{fill}, k)...)
	return append(b, tail...), k
}

// sendLine writes line (a request with id) as the client and returns the
// agent's response to it. With raw, the line goes straight to the agent's
// input, past the transcript (which would parse it; the test must then
// have no other write under way).
func sendLine(t *testing.T, h *harness, id int, line []byte, raw bool) acpclient.Message {
	t.Helper()
	var err error
	if raw {
		_, err = h.in.Write(append(line, '\n'))
	} else {
		err = h.client.WriteLine(line)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := []byte(`"id":` + strconv.Itoa(id) + `,`)
	var got acpclient.Message
	waitFor(t, func() bool {
		for _, l := range h.tr.AgentLines() {
			var m acpclient.Message
			if bytes.Contains(l, want) && json.Unmarshal(l, &m) == nil && m.Method == "" && string(m.ID) == strconv.Itoa(id) {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// TestHugeLine: with --max-message-size 4 MiB, a prompt line of exactly
// the limit is read whole (the model gets all of its text); a line one
// byte over is answered with -32600 naming the limit, with its id, while
// the connection goes on serving the session. The limit is set small so
// that the boundary costs a few MiB (the 64 MiB default:
// TestDefaultMessageLimit).
func TestHugeLine(t *testing.T) {
	const limit = 4 << 20
	f, mb := scriptedModel(t, e2etest.Text(nil, []string{"ok"}, "stop"), e2etest.Text(nil, []string{"again"}, "stop"))
	h := newHarness(t, harnessOpts{model: f.client("k"), options: func(o *server.Options) { o.MaxMessageBytes = limit }})
	sid := h.start(harnessOpts{})
	line, text := promptLine(t, 901, sid, 'a', limit)
	if r := sendLine(t, h, 901, line, false); r.Error != nil || !strings.Contains(string(r.Result), `"stopReason":"end_turn"`) {
		t.Fatalf("a prompt line of exactly the limit answered %s %s", r.Result, r.Error)
	}
	if body := mb.body(1); !strings.Contains(body, strings.Repeat("a", text)) || strings.Contains(body, strings.Repeat("a", text+1)) {
		t.Errorf("the model's request does not hold the prompt's %d bytes of text whole (%d bytes)", text, len(body))
	}
	over, _ := promptLine(t, 902, sid, 'b', limit+1)
	r := sendLine(t, h, 902, over, false)
	if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "limit of 4194304 bytes") {
		t.Fatalf("a prompt line one byte over the limit answered %s %+v, want -32600 naming the limit", r.Result, r.Error)
	}
	if f.requests() != 1 {
		t.Errorf("the refused prompt reached the model (%d requests)", f.requests())
	}
	if stop, err := h.prompt(sid, "small"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt after the refused line = %q, %v", stop, err)
	}
}

// TestDefaultMessageLimit: without --max-message-size the limit is
// acp.DefaultMaxMessageBytes (64 MiB): a line one byte over it is refused
// with -32600 naming it (refusing reads the line through without parsing
// it, so this is cheap), and the session goes on.
func TestDefaultMessageLimit(t *testing.T) {
	if acp.DefaultMaxMessageBytes != 64<<20 {
		t.Fatalf("acp.DefaultMaxMessageBytes = %d, the documented default is 64 MiB", acp.DefaultMaxMessageBytes)
	}
	rec := e2etest.Replay(t, e2etest.Text(nil, []string{"ok"}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec})
	sid := h.start(harnessOpts{})
	over, _ := promptLine(t, 903, sid, 'b', acp.DefaultMaxMessageBytes+1)
	r := sendLine(t, h, 903, over, true)
	if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "limit of 67108864 bytes") {
		t.Fatalf("a line one byte over 64 MiB answered %s %+v, want -32600 naming the limit", r.Result, r.Error)
	}
	if stop, err := h.prompt(sid, "small"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt after the refused line = %q, %v", stop, err)
	}
}

// TestModelErrors covers the model rows of the error table.
func TestModelErrors(t *testing.T) {
	type row struct {
		name    string
		key     string
		handler func(n int, w http.ResponseWriter, r *http.Request)
		code    int
		msg     string
		reqs    int // model requests expected
	}
	status := func(code int, body string) func(int, http.ResponseWriter, *http.Request) {
		return func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(code)
			_, _ = w.Write([]byte(body))
		}
	}
	stream := func(body string) func(int, http.ResponseWriter, *http.Request) {
		return func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(body))
		}
	}
	rows := []row{
		{"no key", "", stream(e2etest.Text(nil, []string{"x"}, "stop")), acp.CodeAuthRequired, "DSH_API_KEY", 0},
		{"401", "k", status(401, `{"error":{"message":"Authentication Fails, Your api key: ****abcd is invalid"}}`), acp.CodeAuthRequired, "DEEPSEEK_API_KEY", 1},
		{"402", "k", status(402, `{"error":{"message":"Insufficient Balance"}}`), acp.CodeInternalError, "Insufficient Balance", 1},
		{"429 retried", "k", status(429, `{"error":{"message":"slow down"}}`), acp.CodeInternalError, "slow down", 3},
		{"503 retried", "k", status(503, `Service Unavailable`), acp.CodeInternalError, "503", 3},
		{"cut stream", "k", stream(strings.TrimSuffix(e2etest.Text(nil, []string{"par", "tial"}, "stop"), "data: [DONE]\n\n")[:200]), acp.CodeInternalError, "", 1},
		{"overloaded", "k", stream(e2etest.Text(nil, []string{"x"}, "insufficient_system_resource")), acp.CodeInternalError, "overloaded", 1},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			fm := newFakeModel(t, r.handler)
			h := newHarness(t, harnessOpts{model: fm.client(r.key)})
			sid := h.start(harnessOpts{})
			err := h.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, nil)
			var e *acp.Error
			if !errors.As(err, &e) {
				t.Fatalf("prompt error = %v, want a JSON-RPC error", err)
			}
			if e.Code != r.code || !strings.Contains(e.Message, r.msg) {
				t.Errorf("got %d %q, want %d containing %q", e.Code, e.Message, r.code, r.msg)
			}
			if strings.Contains(e.Message, "Bearer") {
				t.Errorf("error leaks the authorization header: %q", e.Message)
			}
			if got := fm.requests(); got != r.reqs {
				t.Errorf("model requests = %d, want %d", got, r.reqs)
			}
			data, _ := json.Marshal(e.Data)
			if r.code == acp.CodeInternalError && !strings.Contains(string(data), `"reason"`) {
				t.Errorf("error data %s has no reason", data)
			}
			// The session stays usable: the next prompt fails the same way
			// rather than being refused as busy.
			code, _ := rpcError(t, h, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "again"}}})
			if code != r.code {
				t.Errorf("second prompt code = %d, want %d", code, r.code)
			}
		})
	}
}

// TestReplayExhausted: a replay without files fails the prompt with -32603.
func TestReplayExhausted(t *testing.T) {
	h := newHarness(t, harnessOpts{replay: t.TempDir()})
	sid := h.start(harnessOpts{})
	_, err := h.prompt(sid, "hi")
	var e *acp.Error
	if !errors.As(err, &e) || e.Code != acp.CodeInternalError || !strings.Contains(e.Message, "001.sse") {
		t.Fatalf("prompt error = %v, want -32603 naming 001.sse", err)
	}
}

// stallingModel answers with headers, the opening chunk and one
// reasoning chunk ("hmm"), then holds the stream open until the request
// is cancelled.
func stallingModel(t *testing.T) *fakeModel {
	return newFakeModel(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(e2etest.NewHeldStream(0).Reasoning("hmm")))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
}

// TestCancelPrompt: session/cancel ends a streaming prompt with
// "cancelled" within 200 ms (measured generously here).
func TestCancelPrompt(t *testing.T) {
	fm := stallingModel(t)
	h := newHarness(t, harnessOpts{model: fm.client("k"), options: func(o *server.Options) { o.PromptQueue = 1 }})
	sid := h.start(harnessOpts{})
	_, ch, err := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return joined(h.sessionUpdates(), acp.UpdateAgentThoughtChunk) == "hmm" })
	// A second prompt while one runs waits behind it (the bound is 1);
	// a third is refused, naming the bound.
	_, queued, err := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "again"}}})
	if err != nil {
		t.Fatal(err)
	}
	code, msg := rpcError(t, h, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "more"}}})
	if code != acp.CodeInvalidParams || !strings.Contains(msg, "--prompt-queue 1") {
		t.Errorf("prompt past the queue's bound: code %d %q, want -32602 naming --prompt-queue 1", code, msg)
	}
	h.cancelPrompt(sid, ch, 5*time.Second)
	h.cancelPrompt(sid, queued, 5*time.Second)
	if n := fm.requests(); n != 1 {
		t.Errorf("the model got %d requests, want 1 (the queued prompt was cancelled before its turn)", n)
	}
}

// TestCancelRaceNeverLost writes a prompt and its cancel in one write,
// many times: every prompt must answer "cancelled".
func TestCancelRaceNeverLost(t *testing.T) {
	fm := stallingModel(t)
	h := newHarness(t, harnessOpts{model: fm.client("k")})
	sid := h.start(harnessOpts{})
	for i := 0; i < 50; i++ {
		id := 1000 + i
		pair := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`+"\n"+
			`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, id, sid, sid)
		if err := h.client.WriteLine([]byte(pair)); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"id":%d,"result":{"stopReason":"cancelled"},"jsonrpc":"2.0"}`, id)
		waitFor(t, func() bool {
			for _, l := range h.tr.AgentLines() {
				if string(l) == want {
					return true
				}
			}
			return false
		})
	}
}

// TestCancelRequest: $/cancel_request answers the named request -32800.
func TestCancelRequest(t *testing.T) {
	fm := stallingModel(t)
	h := newHarness(t, harnessOpts{model: fm.client("k")})
	sid := h.start(harnessOpts{})
	id, ch, _ := h.client.Send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	waitFor(t, func() bool { return fm.requests() == 1 })
	_ = h.client.Notify("$/cancel_request", map[string]any{"requestId": id})
	m := <-ch
	if m.Error == nil || m.Error.Code != acp.CodeRequestCancelled {
		t.Fatalf("got %s / %v, want -32800", m.Result, m.Error)
	}
}

// waitFor polls cond until it holds, for up to 30 s (an event, not a
// speed: the bound only ends a test that would hang).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30 s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
