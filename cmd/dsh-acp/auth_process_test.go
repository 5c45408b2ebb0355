package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// validatorInit is the initialize request of the ACP registry's
// validator (its client.py): these capabilities, no auth.terminal.
const validatorInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"ACP Registry Validator","version":"1.0.0"},"clientCapabilities":{"terminal":true,"fs":{"readTextFile":true,"writeTextFile":true},"_meta":{"terminal_output":true,"terminal-auth":true}}}}`

// isolatedEnv is the environment the registry's validator gives an
// agent: a few variables passed through, TERM=dumb and a fresh HOME; no
// key and no XDG_CONFIG_HOME.
func isolatedEnv(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "TERM=dumb", "HOME=" + t.TempDir(), "TMPDIR=" + os.TempDir()}
}

// TestRegistryValidator does what the ACP registry's CI does with an
// agent: start it in a temporary HOME, send initialize with the
// validator's capabilities, require pure JSON on stdout and an auth
// method of type agent or terminal (the validator reads a method without
// type but with _meta["terminal-auth"] as terminal), then close stdin:
// the agent exits 0.
func TestRegistryValidator(t *testing.T) {
	cmd := exec.Command(binary(t))
	cmd.Env = isolatedEnv(t)
	p := startCmd(t, cmd)
	p.send(t, validatorInit)
	line := p.next(t)
	var resp struct {
		Result struct {
			ProtocolVersion int `json:"protocolVersion"`
			AuthMethods     []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
				Type string `json:"type"`
				Meta struct {
					TerminalAuth *struct {
						Label   string   `json:"label"`
						Command string   `json:"command"`
						Args    []string `json:"args"`
					} `json:"terminal-auth"`
				} `json:"_meta"`
			} `json:"authMethods"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatalf("stdout is not JSON: %q", line)
	}
	if resp.Error != nil || resp.Result.ProtocolVersion != 1 {
		t.Fatalf("initialize = %s", line)
	}
	ms := resp.Result.AuthMethods
	if len(ms) != 1 {
		t.Fatalf("authMethods = %s, want one method", line)
	}
	m := ms[0]
	// The registry's reading: a type, else _meta terminal-auth, else agent.
	kind := m.Type
	if kind == "" && m.Meta.TerminalAuth != nil {
		kind = "terminal"
	}
	if kind == "" {
		kind = "agent"
	}
	if kind != "agent" && kind != "terminal" || m.ID == "" || m.Name == "" {
		t.Errorf("auth method %+v is not one the registry accepts", m)
	}
	// No auth.terminal: the legacy method, which runs this binary's login.
	ta := m.Meta.TerminalAuth
	if m.Type != "" || ta == nil {
		t.Fatalf("want an agent method with _meta terminal-auth, got %s", line)
	}
	want, _ := filepath.EvalSymlinks(binary(t))
	if ta.Command != want || strings.Join(ta.Args, " ") != "login" || ta.Label == "" {
		t.Errorf("terminal-auth = %+v, want command %s, args [login]", *ta, want)
	}
	p.stdin.Close()
	for l := range p.lines {
		if !json.Valid(bytes.TrimSpace(l)) {
			t.Errorf("stdout line is not JSON: %q", l)
		}
	}
	if code, _ := p.wait(t); code != 0 {
		t.Errorf("exit code %d at stdin EOF, want 0; stderr:\n%s", code, p.stderr)
	}
}

// fakeEndpoint is an OpenAI-compatible endpoint that accepts one key:
// `GET /models` lists two models, `POST /chat/completions` answers "ok";
// any other key gets 401.
type fakeEndpoint struct {
	srv  *httptest.Server
	key  string
	mu   sync.Mutex
	hits map[string]int
}

func newFakeEndpoint(t *testing.T, key string) *fakeEndpoint {
	f := &fakeEndpoint{key: key, hits: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.hits[r.Method+" "+r.URL.Path]++
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+f.key {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"message":"Authentication Fails, Your api key is invalid","type":"authentication_error"}}`)
			return
		}
		switch r.Method + " " + r.URL.Path {
		case "GET /models":
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"deepseek-chat","object":"model"},{"id":"deepseek-reasoner","object":"model"}]}`)
		case "POST /chat/completions":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, e2etest.Text(nil, []string{"ok"}, "stop"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEndpoint) count(what string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[what]
}

// loginPTY runs `dsh-acp --base-url URL login` on a pseudo-terminal in
// the config dir cfg, types key when the prompt has turned echo off, and
// returns the exit code and everything the terminal showed.
func loginPTY(t *testing.T, cfg, base, key string) (int, string) {
	t.Helper()
	return loginPTYArgs(t, cfg, []string{"--base-url", base, "login"}, key)
}

// loginPTYArgs is loginPTY with the command line args, and answers: for
// each, once the terminal shows answer[0] (after the key was typed),
// answer[1] and a return are typed.
func loginPTYArgs(t *testing.T, cfg string, args []string, key string, answers ...[2]string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(isolatedEnv(t), "XDG_CONFIG_HOME="+cfg)
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out bytes.Buffer
	var mu sync.Mutex
	read := make(chan struct{})
	go func() {
		defer close(read)
		b := make([]byte, 4096)
		for {
			n, err := tty.Read(b)
			mu.Lock()
			out.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	shown := func() string { mu.Lock(); defer mu.Unlock(); return out.String() }
	deadline := time.Now().Add(20 * time.Second)
	// The prompt, then echo off (the master reads the slave's termios):
	// typing earlier would be echoed by the terminal itself.
	for {
		st, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
		if strings.Contains(shown(), "API key (input hidden): ") && err == nil && st.Lflag&unix.ECHO == 0 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no hidden-input prompt; the terminal showed %q", shown())
		}
		time.Sleep(10 * time.Millisecond)
	}
	mark := len(shown()) // what came before the key was typed
	if _, err := io.WriteString(tty, key+"\r"); err != nil {
		t.Fatal(err)
	}
	for _, a := range answers {
		for {
			if i := strings.Index(shown()[mark:], a[0]); i >= 0 {
				mark += i + len(a[0])
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("no %q; the terminal showed %q", a[0], shown())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := io.WriteString(tty, a[1]+"\r"); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("login did not end; the terminal showed %q", shown())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	select {
	case <-read:
	case <-time.After(5 * time.Second):
	}
	return code, shown()
}

// TestLoginLogout: login on a terminal checks the key with GET /models
// and stores it (file 0600, directory 0700, the key never echoed);
// a rejected key stores nothing; logout removes it.
func TestLoginLogout(t *testing.T) {
	const key = "sk-login-test-0123456789"
	ep := newFakeEndpoint(t, key)
	cfg := filepath.Join(t.TempDir(), "config")
	path := filepath.Join(cfg, "dsh-acp", "credentials")

	code, shown := loginPTY(t, cfg, ep.srv.URL, "sk-wrong-key-000")
	if code != 1 || !strings.Contains(shown, "rejected the key (HTTP 401") || !strings.Contains(shown, "nothing was stored") {
		t.Errorf("login with a wrong key: exit %d, terminal %q", code, shown)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a rejected key left %s: %v", path, err)
	}

	code, shown = loginPTY(t, cfg, ep.srv.URL, key)
	if code != 0 || !strings.Contains(shown, "Stored in "+path) || !strings.Contains(shown, "2 models") {
		t.Fatalf("login: exit %d, terminal %q", code, shown)
	}
	if strings.Contains(shown, key) {
		t.Errorf("the key was echoed: %q", shown)
	}
	if n := ep.count("GET /models"); n != 2 {
		t.Errorf("%d GET /models, want 2 (one per login)", n)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v, mode %v; want 0600", err, st.Mode())
	}
	if dst, err := os.Stat(filepath.Dir(path)); err != nil || dst.Mode().Perm() != 0o700 {
		t.Errorf("credentials directory mode %v, %v; want 0700", dst.Mode(), err)
	}
	var f struct {
		Endpoints map[string]struct {
			APIKey string `json:"api_key"`
		} `json:"endpoints"`
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &f); err != nil || f.Endpoints[ep.srv.URL].APIKey != key {
		t.Errorf("credentials file = %s, %v", b, err)
	}

	out, err := runBin(t, cfg, "--base-url", ep.srv.URL, "logout")
	if err != nil || !strings.Contains(out, "Removed the API key stored for "+ep.srv.URL+" from "+path) {
		t.Errorf("logout = %q, %v", out, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s after logout: %v", path, err)
	}
	out, err = runBin(t, cfg, "logout", "--base-url", ep.srv.URL)
	if err != nil || !strings.Contains(out, "No API key was stored") {
		t.Errorf("second logout = %q, %v", out, err)
	}
}

// runBin runs the binary with args in the config dir cfg and returns its
// combined output.
func runBin(t *testing.T, cfg string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(isolatedEnv(t), "XDG_CONFIG_HOME="+cfg)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestLoginWithoutTerminal: login with stdin not a terminal (a pipe, or
// /dev/null) is a clear error and exit 2, and asks nothing of the
// endpoint.
func TestLoginWithoutTerminal(t *testing.T) {
	ep := newFakeEndpoint(t, "sk-x")
	for _, stdin := range []string{"pipe", "devnull"} {
		cmd := exec.Command(binary(t), "--base-url", ep.srv.URL, "login")
		cmd.Env = append(isolatedEnv(t), "XDG_CONFIG_HOME="+t.TempDir())
		if stdin == "pipe" {
			cmd.Stdin = strings.NewReader("sk-x\n")
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "needs an interactive terminal") ||
			!strings.Contains(stderr.String(), "DSH_API_KEY") {
			t.Errorf("%s: login = %v, stderr %q; want exit 2 and the reason", stdin, err, stderr.String())
		}
	}
	if n := ep.count("GET /models"); n != 0 {
		t.Errorf("%d requests to the endpoint", n)
	}
}

// TestLoginWhileRunning: the agent, started without any key, answers
// session/prompt with -32000 naming the ways to log in; `dsh-acp login`
// run meanwhile (as the editor's terminal login does) stores a key that
// the very next prompt uses, with no restart.
func TestLoginWhileRunning(t *testing.T) {
	const key = "sk-running-0123456789"
	ep := newFakeEndpoint(t, key)
	cfg := filepath.Join(t.TempDir(), "config")
	// No title request after the turn (it would be a second chat request).
	cmd := exec.Command(binary(t), "--base-url", ep.srv.URL, "--titles", "off")
	cmd.Env = append(isolatedEnv(t), "XDG_CONFIG_HOME="+cfg, "DSH_STATE_DIR="+t.TempDir())
	p := startCmd(t, cmd)
	p.send(t, validatorInit)
	p.next(t)
	cwd := t.TempDir()
	sid, _ := p.newSession(t, 2, cwd, `[]`)
	prompt := func(id int) map[string]any {
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}}`, id, sid))
		for {
			var m map[string]any
			if err := json.Unmarshal(p.next(t), &m); err != nil {
				t.Fatal(err)
			}
			if m["id"] == float64(id) {
				return m
			}
		}
	}
	r := prompt(3)
	e, _ := r["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if e == nil || e["code"] != float64(-32000) {
		t.Fatalf("prompt without a key = %v, want error -32000", r)
	}
	for _, want := range []string{"dsh-acp login", "DSH_API_KEY", "DEEPSEEK_API_KEY"} {
		if !strings.Contains(msg, want) {
			t.Errorf("auth_required message %q does not name %s", msg, want)
		}
	}
	if code, shown := loginPTY(t, cfg, ep.srv.URL, key); code != 0 {
		t.Fatalf("login: exit %d, %q", code, shown)
	}
	r = prompt(4)
	if res, _ := r["result"].(map[string]any); res == nil || res["stopReason"] != "end_turn" {
		t.Errorf("prompt after login = %v, want end_turn", r)
	}
	if n := ep.count("POST /chat/completions"); n != 1 {
		t.Errorf("%d model requests, want 1 (after login only)", n)
	}
	p.stdin.Close()
	for range p.lines {
	}
	if code, _ := p.wait(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestCredentialsFileErrors: logout of a junk file and a login prompt
// refused for a file open to others name the file and never print it.
func TestCredentialsFileErrors(t *testing.T) {
	const secret = "sk-JUNK-SECRET"
	cfg := t.TempDir()
	path := filepath.Join(cfg, "dsh-acp", "credentials")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ep := newFakeEndpoint(t, secret)
	for _, c := range []struct {
		name, content string
		mode          os.FileMode
		want          string
	}{
		{"junk", "key: " + secret, 0o600, "is not valid JSON"},
		{"open", `{"endpoints":{"` + ep.srv.URL + `":{"api_key":"` + secret + `"}}}`, 0o640, "is open to other users (mode 0640"},
	} {
		if err := os.WriteFile(path, []byte(c.content), c.mode); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(path, c.mode)
		cmd := exec.Command(binary(t), "--base-url", ep.srv.URL)
		cmd.Env = append(isolatedEnv(t), "XDG_CONFIG_HOME="+cfg, "DSH_STATE_DIR="+t.TempDir())
		p := startCmd(t, cmd)
		p.send(t, validatorInit)
		p.next(t)
		sid, _ := p.newSession(t, 2, t.TempDir(), `[]`)
		p.commands(t)
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"hi"}]}}`, sid))
		line := string(p.next(t))
		if !strings.Contains(line, `"code":-32000`) || !strings.Contains(line, path) || !strings.Contains(line, c.want) {
			t.Errorf("%s: prompt = %s; want -32000 naming %s and %q", c.name, line, path, c.want)
		}
		p.stdin.Close()
		for range p.lines {
		}
		p.wait(t)
		if strings.Contains(line, secret) || strings.Contains(p.stderr.String(), secret) {
			t.Errorf("%s: the file's content was shown: %s\n%s", c.name, line, p.stderr)
		}
	}
	if ep.count("POST /chat/completions") != 0 {
		t.Error("a model request was made with an unusable file")
	}
}
