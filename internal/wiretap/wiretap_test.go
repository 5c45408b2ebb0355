package wiretap

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

const key = "plainkeyvalue0123456789" // an API key of no known shape

// TestRedactMessage: the rule of Redactor, one case per clause, and what
// it must leave alone.
func TestRedactMessage(t *testing.T) {
	r := NewRedactor(key, "short")
	cases := []struct{ name, in, want string }{
		{"the API key anywhere",
			`{"text":"my key is ` + key + ` ok","k":"x` + key + `"}`,
			`{"text":"my key is [REDACTED] ok","k":"x[REDACTED]"}`},
		{"secret member names",
			`{"apiKey":"a","api_key":"b","GITHUB_TOKEN":"c","X-Api-Key":"d","password":"e","authorization":"f","APIKey":"g","sessionToken":"h","tokens":["x"],"auth":["i","j"]}`,
			`{"apiKey":"[REDACTED]","api_key":"[REDACTED]","GITHUB_TOKEN":"[REDACTED]","X-Api-Key":"[REDACTED]","password":"[REDACTED]","authorization":"[REDACTED]","APIKey":"[REDACTED]","sessionToken":"[REDACTED]","tokens":["x"],"auth":["[REDACTED]","[REDACTED]"]}`},
		{"names that are not secret",
			`{"sessionId":"s1","toolCallId":"c","monkey":"m","max_tokens":5,"tokenCount":7,"keyboard":"k","authMethods":[{"id":"a","name":"n"}]}`,
			`{"sessionId":"s1","toolCallId":"c","monkey":"m","max_tokens":5,"tokenCount":7,"keyboard":"k","authMethods":[{"id":"a","name":"n"}]}`},
		{"MCP env and headers",
			`{"mcpServers":[{"name":"gh","command":"gh-mcp","env":[{"name":"GITHUB_TOKEN","value":"t0"},{"name":"LANG","value":"C"}],"headers":[{"name":"Authorization","value":"Bearer x"},{"name":"Accept","value":"json"}]}]}`,
			`{"mcpServers":[{"name":"gh","command":"gh-mcp","env":[{"name":"GITHUB_TOKEN","value":"[REDACTED]"},{"name":"LANG","value":"C"}],"headers":[{"name":"Authorization","value":"[REDACTED]"},{"name":"Accept","value":"json"}]}]}`},
		{"names that run words together",
			`{"env":[{"name":"PGPASSWORD","value":"hunter2hunter2"},{"name":"AUTHTOKEN","value":"t1"},{"name":"SECRETKEY","value":"t2"},{"name":"OPENAIAPIKEY","value":"t3"},{"name":"PGHOST","value":"db"}],"accesstoken":"t4","dbPassword":"t5"}`,
			`{"env":[{"name":"PGPASSWORD","value":"[REDACTED]"},{"name":"AUTHTOKEN","value":"[REDACTED]"},{"name":"SECRETKEY","value":"[REDACTED]"},{"name":"OPENAIAPIKEY","value":"[REDACTED]"},{"name":"PGHOST","value":"db"}],"accesstoken":"[REDACTED]","dbPassword":"[REDACTED]"}`},
		{"secret flags in arguments",
			`{"mcpServers":[{"name":"b","command":"npx","args":["-y","@brave/mcp","--api-key","BSAunshaped0123456","--token=unshapedtok456789","-v","--auth-token:abcdefgh99","--verbose"]}],"command":"tool --api-key=unshaped0123 --debug"}`,
			`{"mcpServers":[{"name":"b","command":"npx","args":["-y","@brave/mcp","--api-key","[REDACTED]","--token=[REDACTED]","-v","--auth-token:[REDACTED]","--verbose"]}],"command":"tool --api-key=[REDACTED] --debug"}`},
		{"token shapes in text",
			`{"t":"sk-abcdefghijklmnop1234 ghp_abcdefghijklmnopqrstuvwxyz012 AKIAABCDEFGHIJKLMNOP eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeKKF"}`,
			`{"t":"[REDACTED] [REDACTED] [REDACTED] [REDACTED]"}`},
		{"authorization schemes",
			`{"command":"curl -H 'Authorization: Bearer abc.def-123456' -H \"Authorization: Basic dXNlcjpwYXNzd29yZA==\" x"}`,
			`{"command":"curl -H 'Authorization: [REDACTED] [REDACTED]' -H \"Authorization: Basic [REDACTED]\" x"}`},
		{"assignments",
			`{"out":"HOME=/root\nDSH_API_KEY=abcdef123\nDB_PASSWORD='hunter22'\nPATH=/bin\napi_key: xyzxyz99\nkey=v\ntoken = tok123456\necho key=$DSH_API_KEY ${TOKEN_VALUE}\nPGPASSWORD=hunter2hunter2 psql"}`,
			`{"out":"HOME=/root\nDSH_API_KEY=[REDACTED]\nDB_PASSWORD='[REDACTED]'\nPATH=/bin\napi_key: [REDACTED]\nkey=v\ntoken = [REDACTED]\necho key=$DSH_API_KEY ${TOKEN_VALUE}\nPGPASSWORD=[REDACTED] psql"}`},
		{"URL passwords and PEM keys",
			`{"u":"https://bob:s3cr3t@example.com/x","p":"-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----"}`,
			`{"u":"https://bob:[REDACTED]@example.com/x","p":"-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----"}`},
		{"order, numbers and escapes are kept",
			`{"z":1.50,"a":[true,false,null,-0.0e1],"h":"<b>&</b>","u":"é\u0001"}`,
			`{"z":1.50,"a":[true,false,null,-0.0e1],"h":"<b>&</b>","u":"é\u0001"}`},
		{"short secrets are ignored", `{"t":"short"}`, `{"t":"short"}`},
	}
	for _, c := range cases {
		got, ok := r.Message([]byte(c.in))
		if !ok || string(got) != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.name, got, ok, c.want)
		}
		if ok && !json.Valid(got) {
			t.Errorf("%s: invalid JSON %s", c.name, got)
		}
	}
	for _, bad := range []string{`{"a":`, `not json ` + key, `{} {}`, strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)} {
		if _, ok := r.Message([]byte(bad)); ok {
			t.Errorf("%q parsed as one message", bad)
		}
	}
	if got := r.Text("not json " + key + " Bearer abcdefghij"); got != "not json [REDACTED] Bearer [REDACTED]" {
		t.Errorf("Text = %q", got)
	}
}

// TestRedactSplitKey: the API key streamed in pieces, one message each
// (a model repeating it), is redacted in every piece but its first
// minPartial-1 bytes; other members, and text that only looks like the
// key's beginning for a moment, are left alone; a key added later counts
// from then on.
func TestRedactSplitKey(t *testing.T) {
	r := NewRedactor(key)
	chunk := func(text string) string {
		m, _ := json.Marshal(map[string]any{"method": "session/update", "params": map[string]any{"update": map[string]any{"content": map[string]any{"text": text}}}})
		got, ok := r.Message(m)
		if !ok {
			t.Fatalf("%s not parsed", m)
		}
		var back struct {
			Params struct {
				Update struct {
					Content struct{ Text string }
				}
			}
		}
		_ = json.Unmarshal(got, &back)
		return back.Params.Update.Content.Text
	}
	var shown []string
	for _, piece := range []string{"your key is ", key[:3], key[3:5], key[5:12], "", key[12:], " ok"} {
		shown = append(shown, chunk(piece))
	}
	want := []string{"your key is ", key[:3], "[REDACTED]", "[REDACTED]", "", "[REDACTED]", " ok"}
	if !slices.Equal(shown, want) {
		t.Errorf("pieces shown %q, want %q", shown, want)
	}
	if all := strings.Join(shown, ""); strings.Contains(all, key[3:]) {
		t.Errorf("the key's rest shows: %q", all)
	}
	// A beginning that does not go on is only redacted while it might.
	if got := chunk("plainkey"); got != "[REDACTED]" {
		t.Errorf("a beginning of the key: %q", got)
	}
	if got := chunk(" is a word"); got != " is a word" {
		t.Errorf("the text after a false start: %q", got)
	}
	// Another member's strings are not joined with these.
	if got, _ := r.Message([]byte(`{"params":{"other":"` + key[10:] + `"}}`)); !strings.Contains(string(got), key[10:]) {
		t.Errorf("another member: %s", got)
	}
	later := "laterkeyvalue987654321"
	if got := r.Text("x " + later); got != "x "+later {
		t.Errorf("an unknown key: %q", got)
	}
	r.Add(later)
	if got := chunk("k=" + later[:6]); got != "k=[REDACTED]" {
		t.Errorf("an added key's beginning: %q", got)
	}
	if got := chunk(later[6:]); got != "[REDACTED]" {
		t.Errorf("an added key's rest: %q", got)
	}
}

// TestTap: messages through the tap pass unchanged; the debug log names
// each one's direction, kind, method (a response's from its request), id
// and size, and nothing of its contents; the trace holds each message,
// redacted, in order, and copes with a last line without a newline, a
// line that is not JSON and one longer than MaxLine.
func TestTap(t *testing.T) {
	var logs, trace bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	clock := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	tap := New(Options{Log: log, Trace: &trace, Redactor: NewRedactor(key), PID: 42, Now: func() time.Time { return clock }})
	initLine := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`
	big := `{"jsonrpc":"2.0","method":"session/update","params":{"u":"` + strings.Repeat("x", MaxLine) + `"}}`
	in := strings.Join([]string{
		initLine,
		``,
		`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"prompt":[{"type":"text","text":"key ` + key + `"}]}}`,
		`garbage ` + key,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":"x"}}`,
	}, "\n") // no final newline
	var got bytes.Buffer
	if _, err := io.Copy(&got, oneByteReader{tap.Reader(strings.NewReader(in))}); err != nil {
		t.Fatal(err)
	}
	if got.String() != in {
		t.Error("the reader changed the bytes")
	}
	w := tap.Writer(io.Discard)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}` + "\n",
		`{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"path":"/a"}}` + "\n" + `{"jsonrpc":"2.0","id":"p","error":{"code":-32603,"message":"m"}}` + "\n",
		big + "\n",
	} {
		if n, err := w.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatal(n, err)
		}
	}

	type rec struct {
		Dir, Kind, Method, ID string
		Bytes                 int64
	}
	var recs []rec
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var r rec
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	want := []rec{
		{"in", "request", "initialize", "1", int64(len(initLine))},
		{"in", "request", "session/prompt", `"p"`, 0},
		{"in", "invalid", "", "", 0},
		{"in", "notification", "session/cancel", "", 0},
		{"in", "response", "", "7", 0}, // its request was never seen
		{"out", "response", "initialize", "1", 0},
		{"out", "request", "fs/read_text_file", "7", 0},
		{"out", "error", "session/prompt", `"p"`, 0},
		{"out", "oversized", "", "", int64(len(big))},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d log records, want %d:\n%s", len(recs), len(want), logs.String())
	}
	for i, r := range recs {
		w := want[i]
		if w.Bytes == 0 {
			w.Bytes = r.Bytes
		}
		if r != w {
			t.Errorf("record %d = %+v, want %+v", i, r, w)
		}
	}
	if strings.Contains(logs.String(), key) || strings.Contains(logs.String(), "protocolVersion") || strings.Contains(logs.String(), "garbage") {
		t.Errorf("the log shows contents: %s", logs.String())
	}

	lines := strings.Split(strings.TrimSuffix(trace.String(), "\n"), "\n")
	if len(lines) != 9 {
		t.Fatalf("%d trace lines:\n%s", len(lines), trace.String())
	}
	if want := `{"time":"2026-01-02T03:04:05.006Z","pid":42,"dir":"in","bytes":` + itoa(len(initLine)) + `,"message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}}`; lines[0] != want {
		t.Errorf("trace line 0:\n got %s\nwant %s", lines[0], want)
	}
	if !strings.Contains(lines[1], `"text":"key [REDACTED]"`) || !strings.Contains(lines[2], `"text":"garbage [REDACTED]"`) {
		t.Errorf("trace lines 1-2:\n%s\n%s", lines[1], lines[2])
	}
	if !strings.Contains(lines[4], `"dir":"in"`) || !strings.Contains(lines[4], `"result":{"content":"x"}`) {
		t.Errorf("the last line without a newline: %s", lines[4])
	}
	if !strings.HasSuffix(lines[8], `"dir":"out","bytes":`+itoa(len(big))+`}`) {
		t.Errorf("oversized line traced as %.200s", lines[8])
	}
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("trace line %d is not JSON: %.200s", i, l)
		}
		if strings.Contains(l, key) {
			t.Errorf("trace line %d holds the key", i)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// oneByteReader reads one byte at a time, so lines arrive in pieces.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

// TestTapInactive: without a debug logger or a trace the tap is off.
func TestTapInactive(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if New(Options{Log: log}).Active() || New(Options{}).Active() {
		t.Error("an inactive tap reports active")
	}
	if !New(Options{Trace: io.Discard}).Active() {
		t.Error("a trace does not make the tap active")
	}
}

// BenchmarkTrace measures tracing one typical session/update line.
func BenchmarkTrace(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_0123456789abcdef","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_00_0","status":"completed","rawOutput":"` + strings.Repeat("some output line\\n", 200) + `"}}}` + "\n")
	tap := New(Options{Trace: io.Discard, Redactor: NewRedactor(key)})
	w := tap.Writer(io.Discard)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = w.Write(line)
	}
}
