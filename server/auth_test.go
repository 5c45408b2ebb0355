package server_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/bridge"
	"github.com/dsh-acp/dsh-acp/credentials"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
)

// loginDescription is the login method's description, as initialize
// sends it.
const loginDescription = "Runs `dsh-acp login` in a terminal: it asks for the API key without echo, checks it with the endpoint and stores it for this user (or set DSH_API_KEY / DEEPSEEK_API_KEY in the agent's environment)."

// TestAuthMethods checks initialize's authMethods for each combination of
// the editor's terminal-auth capabilities (ACP §5): never empty, the typed
// method only with auth.terminal, the legacy _meta whenever the editor
// may read it.
func TestAuthMethods(t *testing.T) {
	legacy := `{"terminal-auth":{"args":["login"],"command":"` + testExecutable + `","label":"dsh-acp login"}}`
	cases := []struct {
		name string
		caps map[string]any
		want string
	}{
		{"none", nil,
			`[{"_meta":` + legacy + `,"description":"` + loginDescription + `","id":"login","name":"Log in with an API key"}]`},
		{"legacy only (the registry's validator)", map[string]any{"terminal": true, "fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "_meta": map[string]any{"terminal_output": true, "terminal-auth": true}},
			`[{"_meta":` + legacy + `,"description":"` + loginDescription + `","id":"login","name":"Log in with an API key"}]`},
		{"auth.terminal only", map[string]any{"auth": map[string]any{"terminal": true}},
			`[{"args":["login"],"description":"` + loginDescription + `","id":"login","name":"Log in with an API key","type":"terminal"}]`},
		{"both (Zed)", map[string]any{"auth": map[string]any{"terminal": true}, "_meta": map[string]any{"terminal_output": true, "terminal-auth": true}},
			`[{"_meta":` + legacy + `,"args":["login"],"description":"` + loginDescription + `","id":"login","name":"Log in with an API key","type":"terminal"}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{})
			var got struct {
				AuthMethods json.RawMessage `json:"authMethods"`
			}
			params := map[string]any{"protocolVersion": 1}
			if c.caps != nil {
				params["clientCapabilities"] = c.caps
			}
			h.mustCall("initialize", params, &got)
			var v any
			_ = json.Unmarshal(got.AuthMethods, &v)
			b, _ := json.Marshal(v)
			if string(b) != c.want {
				t.Errorf("authMethods\n got %s\nwant %s", b, c.want)
			}
		})
	}
}

// authHarness is a harness whose model client and login check read the
// credentials file at path, as the binary wires them, against a fake
// endpoint that counts its requests.
func authHarness(t *testing.T, env map[string]string) (*harness, credentials.Store, *atomic.Int32, string) {
	t.Helper()
	var reqs atomic.Int32
	var gotKey atomic.Value
	fm := newFakeModel(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		reqs.Add(1)
		gotKey.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(e2etest.Text(nil, []string{"ok"}, "stop")))
	})
	store := credentials.Store{Path: filepath.Join(t.TempDir(), "dsh-acp", "credentials")}
	src := credentials.Source{Store: store, BaseURL: fm.srv.URL, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	client := fm.client("").(llm.HTTP)
	client.KeyFunc = src.APIKey
	h := newHarness(t, harnessOpts{model: client, auth: &bridge.Auth{Command: testExecutable, Check: src.Check,
		Logout: func() error { _, err := store.Remove(fm.srv.URL); return err }}})
	t.Cleanup(func() {
		if k, _ := gotKey.Load().(string); k != "" && !strings.HasPrefix(k, "Bearer ") {
			t.Errorf("Authorization = %q", k)
		}
	})
	return h, store, &reqs, fm.srv.URL
}

// TestPromptWithoutKey: without any key, initialize and session/new work
// and session/prompt answers -32000 naming `dsh-acp login` and both
// variables, with no model request and nothing logged; a key stored while
// the agent runs is used by the next prompt (no restart); logout removes
// it and the next prompt is refused again.
func TestPromptWithoutKey(t *testing.T) {
	h, store, reqs, base := authHarness(t, nil)
	sid := h.start(harnessOpts{})
	prompt := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}
	before := len(h.sessionUpdates()) // the slash commands after session/new
	code, msg := rpcError(t, h, "session/prompt", prompt)
	if code != acp.CodeAuthRequired {
		t.Fatalf("prompt without a key = %d %q, want -32000", code, msg)
	}
	for _, want := range []string{"dsh-acp login", "DSH_API_KEY", "DEEPSEEK_API_KEY"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %s", msg, want)
		}
	}
	if n := reqs.Load(); n != 0 {
		t.Errorf("%d model requests without a key", n)
	}
	if n := len(h.sessionUpdates()) - before; n != 0 {
		t.Errorf("%d session updates for a refused prompt", n)
	}
	if code, msg := rpcError(t, h, "authenticate", map[string]any{"methodId": "login"}); code != acp.CodeAuthRequired {
		t.Errorf("authenticate before login = %d %q, want -32000", code, msg)
	}
	if code, msg := rpcError(t, h, "authenticate", map[string]any{"methodId": "oauth"}); code != acp.CodeInvalidParams || !strings.Contains(msg, `"login"`) {
		t.Errorf("authenticate with an unknown method = %d %q, want -32602 naming login", code, msg)
	}

	// `dsh-acp login` in another process, while this one runs.
	if err := store.Save(base, "sk-stored-123456"); err != nil {
		t.Fatal(err)
	}
	if code, msg := rpcError(t, h, "authenticate", map[string]any{"methodId": "login"}); code != 0 {
		t.Errorf("authenticate after login = %d %q, want {}", code, msg)
	}
	if code, msg := rpcError(t, h, "session/prompt", prompt); code != 0 {
		t.Fatalf("prompt after login = %d %q", code, msg)
	}
	if n := reqs.Load(); n != 1 {
		t.Errorf("%d model requests after login, want 1", n)
	}

	if code, msg := rpcError(t, h, "logout", map[string]any{}); code != 0 {
		t.Fatalf("logout = %d %q", code, msg)
	}
	if _, err := os.Stat(store.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("credentials file after logout: %v", err)
	}
	if code, _ := rpcError(t, h, "session/prompt", prompt); code != acp.CodeAuthRequired {
		t.Errorf("prompt after logout = %d, want -32000", code)
	}
}

// TestPromptBadCredentials: a credentials file open to other users or
// holding junk is refused with -32000 naming the file, never quoting it.
func TestPromptBadCredentials(t *testing.T) {
	const secret = "sk-SECRET-in-junk"
	cases := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
	}{
		{"open to others", `{"endpoints":{"{{base}}":{"api_key":"` + secret + `"}}}`, 0o644, "open to other users"},
		{"junk", "api_key=" + secret + "\n", 0o600, "not valid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, store, reqs, base := authHarness(t, nil)
			sid := h.start(harnessOpts{})
			if err := os.MkdirAll(filepath.Dir(store.Path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(store.Path, []byte(strings.ReplaceAll(c.content, "{{base}}", base)), c.mode); err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod(store.Path, c.mode)
			code, msg := rpcError(t, h, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
			if code != acp.CodeAuthRequired || !strings.Contains(msg, store.Path) || !strings.Contains(msg, c.want) {
				t.Errorf("prompt = %d %q, want -32000 naming %s and %q", code, msg, store.Path, c.want)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("the message quotes the file: %q", msg)
			}
			if reqs.Load() != 0 {
				t.Error("a model request was made")
			}
		})
	}
}

// TestKeyOrder: DSH_API_KEY wins over DEEPSEEK_API_KEY, which wins over
// the credentials file; the variables are used even when the file is
// junk (it is not read).
func TestKeyOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"DSH_API_KEY", map[string]string{"DSH_API_KEY": "sk-dsh-1", "DEEPSEEK_API_KEY": "sk-ds-2"}, "sk-dsh-1"},
		{"DEEPSEEK_API_KEY", map[string]string{"DSH_API_KEY": "", "DEEPSEEK_API_KEY": "sk-ds-2"}, "sk-ds-2"},
		{"file", map[string]string{}, "sk-file-3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := credentials.Store{Path: filepath.Join(t.TempDir(), "credentials")}
			if c.want == "sk-file-3" {
				if err := store.Save("http://x", "sk-file-3"); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(store.Path, []byte("junk"), 0o600); err != nil {
				t.Fatal(err)
			}
			src := credentials.Source{Store: store, BaseURL: "http://x/", Env: func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }}
			got, err := src.APIKey()
			if err != nil || got != c.want {
				t.Errorf("key = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}
