package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/credentials"
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// TestDebugLogAndTrace: through the real binary,
// --log-level debug logs one line per ACP message with its direction,
// kind, method, id and size and nothing of its contents; --trace (here
// DSH_TRACE) writes every message both ways, in order, with the API key
// and other secrets redacted: in the prompt, in an MCP server's env, in
// a command's output. What the agent writes stays schema-valid and is
// traced byte for byte, up to the redactions.
func TestDebugLogAndTrace(t *testing.T) {
	const apiKey = "unshapedapikeyvalue42"
	const ghToken = "ghp_abcdefghijklmnopqrstuvwxyz0123"
	cwd := t.TempDir()
	tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
	rec := e2etest.Replay(t,
		e2etest.ToolCalls(bashCall(map[string]any{"command": "echo key=$DSH_API_KEY; echo " + ghToken, "description": "Leak"})),
		e2etest.Text(nil, []string{"Done."}, "stop"))
	cmd := exec.Command(binary(t), "--replay", rec, "--mode", "bypassPermissions", "--log-level", "debug")
	cmd.Env = append(os.Environ(), "DSH_STATE_DIR="+t.TempDir(), "DSH_API_KEY="+apiKey, "DEEPSEEK_API_KEY=", "DSH_TRACE="+tracePath)
	p := startCmd(t, cmd)
	requests := map[string]string{"1": "initialize", "2": "session/new", "3": "session/prompt"}
	p.send(t, initLine)
	var out [][]byte
	out = append(out, p.next(t))
	sid, l := p.newSession(t, 2, cwd, `[{"name":"gh","command":"gh-mcp","args":[],"env":[{"name":"GITHUB_TOKEN","value":"`+ghToken+`"}]}]`)
	out = append(out, l)
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"my key is `+apiKey+`, run the command"}]}}`)
	out = append(out, p.answer(t, 3)...)
	p.stdin.Close()
	if code, _ := p.wait(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}

	v := acptest.Load(t)
	for _, l := range out {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(l, &m)
		if err := v.Validate(l, requests[string(m.ID)]); err != nil {
			t.Errorf("schema: %v\n%s", err, l)
		}
	}
	// The key reaches the agent's output (the session title quotes the
	// prompt; commands do not get it in their environment), the token
	// too (the command prints it).
	if all := string(joinLines(out)); !strings.Contains(all, apiKey) || !strings.Contains(all, "```console\\nkey=\\n"+ghToken) || strings.Contains(all, "key="+apiKey) {
		t.Fatalf("the secrets are not where the test expects them:\n%s", all)
	}

	// The debug log: one record per message, no contents.
	stderr := p.stderr.String()
	rec1 := regexp.MustCompile(`msg="acp message" dir=(in|out) kind=(\w+)(?: method=(\S+))?(?: id=(\S+))? bytes=(\d+)`)
	recs := rec1.FindAllStringSubmatch(stderr, -1)
	if len(recs) < 3+len(out) {
		t.Errorf("%d message records for %d messages in and %d out:\n%s", len(recs), 3, len(out), stderr)
	}
	for _, want := range []string{
		`dir=in kind=request method=initialize id=1 bytes=` + itoa(len(initLine)),
		`dir=out kind=response method=initialize id=1 bytes=`,
		`dir=in kind=request method=session/prompt id=3`,
		`dir=out kind=notification method=session/update bytes=`,
		`dir=out kind=response method=session/prompt id=3`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the debug log lacks %q", want)
		}
	}
	for _, secret := range []string{apiKey, ghToken, "run the command"} {
		if strings.Contains(stderr, secret) {
			t.Errorf("the debug log shows %q:\n%s", secret, stderr)
		}
	}
	// The records of the messages hold no contents at all: not even the
	// MCP server's command, which the warning that it did not start names
	// (the bridge's own record, not the message's).
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, `msg="acp message"`) && strings.Contains(l, "gh-mcp") {
			t.Errorf("a message record shows the MCP server's command: %s", l)
		}
	}

	// The trace: every message, both ways, redacted.
	f, err := os.Open(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, _ := f.Stat(); fi.Mode().Perm() != 0o600 {
		t.Errorf("trace mode %o, want 600", fi.Mode().Perm())
	}
	var ins, outs []json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var tl struct {
			Time    string          `json:"time"`
			PID     int             `json:"pid"`
			Dir     string          `json:"dir"`
			Bytes   int             `json:"bytes"`
			Message json.RawMessage `json:"message"`
		}
		if err := json.Unmarshal(sc.Bytes(), &tl); err != nil || tl.Time == "" || tl.PID == 0 || tl.Message == nil {
			t.Fatalf("trace line %s: %v", sc.Bytes(), err)
		}
		if strings.Contains(sc.Text(), apiKey) || strings.Contains(sc.Text(), ghToken) {
			t.Errorf("the trace holds a secret: %s", sc.Bytes())
		}
		if tl.Dir == "in" {
			ins = append(ins, tl.Message)
		} else {
			outs = append(outs, tl.Message)
		}
	}
	if len(ins) != 3 || len(outs) != len(out) {
		t.Fatalf("traced %d in and %d out, want 3 and %d", len(ins), len(outs), len(out))
	}
	redactions := 0
	for i, l := range out {
		want := strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(string(l)), apiKey, "[REDACTED]"), ghToken, "[REDACTED]")
		redactions += strings.Count(string(l), apiKey) + strings.Count(string(l), ghToken)
		if got := string(outs[i]); got != want {
			t.Errorf("traced out %d:\n got %s\nwant %s", i, got, want)
		}
	}
	if redactions == 0 {
		t.Error("nothing the agent wrote needed redacting")
	}
	if !strings.Contains(string(ins[1]), `{"name":"GITHUB_TOKEN","value":"[REDACTED]"}`) || !strings.Contains(string(ins[2]), "my key is [REDACTED], run the command") {
		t.Errorf("traced in:\n%s\n%s", ins[1], ins[2])
	}
}

func joinLines(ls [][]byte) []byte {
	var b []byte
	for _, l := range ls {
		b = append(b, l...)
	}
	return b
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestTraceRedactsStoredKey: the key `dsh-acp login` stored is a known
// secret of the trace as the variable's is: one stored before the agent
// started (here in the prompt and in the model's answer, in pieces), and
// one stored by a login while the agent runs (in the model's answer to
// the next prompt). The keys have no token shape: only knowing them
// redacts them.
func TestTraceRedactsStoredKey(t *testing.T) {
	const stored = "storedunshapedkey0042"
	const later = "laterunshapedkey0042"
	trace := func(t *testing.T, path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	prompt := func(t *testing.T, p *proc, id int, text string) {
		sid, _ := p.newSession(t, 20+id, t.TempDir(), `[]`)
		p.send(t, `{"jsonrpc":"2.0","id":3`+itoa(id)+`,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":`+string(jsonQuote(text))+`}]}}`)
		ls := p.answer(t, 30+id)
		if l := ls[len(ls)-1]; !strings.Contains(string(l), "end_turn") {
			t.Fatalf("prompt answered %s", l)
		}
	}
	t.Run("stored before the start", func(t *testing.T) {
		cfg := t.TempDir()
		if err := (credentials.Store{Path: filepath.Join(cfg, "dsh-acp", "credentials")}).Save(defaultBaseURL, stored); err != nil {
			t.Fatal(err)
		}
		tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
		rec := e2etest.Replay(t, e2etest.Text(nil, []string{"your key is ", stored[:9], stored[9:], "."}, "stop"))
		cmd := exec.Command(binary(t), "--replay", rec)
		cmd.Env = append(isolatedEnv(t), "XDG_CONFIG_HOME="+cfg, "DSH_STATE_DIR="+t.TempDir(), "DSH_TRACE="+tracePath)
		p := startCmd(t, cmd)
		p.send(t, initLine)
		p.next(t)
		prompt(t, p, 1, "my key is "+stored)
		p.stdin.Close()
		if code, _ := p.wait(t); code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
		}
		if tr := trace(t, tracePath); strings.Contains(tr, stored) || strings.Contains(tr, stored[:9]+`"`) || !strings.Contains(tr, "my key is [REDACTED]") {
			t.Errorf("the trace holds the stored key:\n%s", tr)
		}
	})
	t.Run("stored by a login while running", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+later {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			switch r.URL.Path {
			case "/models":
				_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"deepseek-chat","object":"model"}]}`)
			case "/chat/completions":
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, e2etest.Text(nil, []string{"your key is " + later + "."}, "stop"))
			default:
				http.NotFound(w, r)
			}
		}))
		t.Cleanup(srv.Close)
		cfg := filepath.Join(t.TempDir(), "config")
		tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
		// --titles off: a title request after the turn would be a
		// second chat request whose update may follow the answer.
		cmd := exec.Command(binary(t), "--base-url", srv.URL, "--titles", "off")
		cmd.Env = append(isolatedEnv(t), "XDG_CONFIG_HOME="+cfg, "DSH_STATE_DIR="+t.TempDir(), "DSH_TRACE="+tracePath)
		p := startCmd(t, cmd)
		p.send(t, initLine)
		p.next(t)
		if code, shown := loginPTY(t, cfg, srv.URL, later); code != 0 {
			t.Fatalf("login: exit %d, %q", code, shown)
		}
		prompt(t, p, 2, "what is my key?")
		p.stdin.Close()
		if code, _ := p.wait(t); code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
		}
		if tr := trace(t, tracePath); strings.Contains(tr, later) || !strings.Contains(tr, "your key is [REDACTED].") {
			t.Errorf("the trace holds the key of the login:\n%s", tr)
		}
	})
}

// TestLogRedactsMCPSecrets: an HTTP MCP server that does not start is
// named in the log (stderr) with its error, which quotes its URL: the
// log is redacted as the trace is (a token in the URL's query, a URL
// password), so a log pasted into a bug report holds no secret.
func TestLogRedactsMCPSecrets(t *testing.T) {
	const token = "unshapedquerysecret0042"
	tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
	cmd := exec.Command(binary(t), "--replay", e2etest.Replay(t, e2etest.Text(nil, []string{"Done."}, "stop")), "--log-level", "debug")
	cmd.Env = append(isolatedEnv(t), "DSH_STATE_DIR="+t.TempDir(), "DSH_TRACE="+tracePath)
	p := startCmd(t, cmd)
	p.send(t, initLine)
	p.next(t)
	sid, _ := p.newSession(t, 2, t.TempDir(), `[{"type":"http","name":"search","url":"http://127.0.0.1:1/mcp?api_key=`+token+`","headers":[]}]`)
	// The server's start has failed by the end of a turn (the refused
	// connection is immediate; the turn waits for the session's servers).
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"hi"}]}}`)
	p.answer(t, 3)
	p.stdin.Close()
	if code, _ := p.wait(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	stderr := p.stderr.String()
	if !strings.Contains(stderr, "did not start") {
		t.Fatalf("the log does not name the failed server:\n%s", stderr)
	}
	if strings.Contains(stderr, token) {
		t.Errorf("the log holds the URL's token:\n%s", stderr)
	}
	if tr, _ := os.ReadFile(tracePath); strings.Contains(string(tr), token) {
		t.Errorf("the trace holds the URL's token:\n%s", tr)
	}
}
