package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// closedURL is an http URL on 127.0.0.1 where nothing listens (a port
// just released): a connection is refused.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

// storedKey is the key the credentials file under cfg holds for base
// ("" when none).
func storedKey(t *testing.T, cfg, base string) string {
	b, err := os.ReadFile(filepath.Join(cfg, "dsh-acp", "credentials"))
	if os.IsNotExist(err) {
		return ""
	}
	var f struct {
		Endpoints map[string]struct {
			APIKey string `json:"api_key"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("credentials file %s: %v", b, err)
	}
	return f.Endpoints[base].APIKey
}

// TestLoginCheckUnreachable: on a terminal, when GET /models cannot be
// reached (a refused connection, a 404 from a proxy that lets only chat
// through), login says so and asks whether to store the key anyway: no
// (or just return) stores nothing and exits 1, yes stores it; --no-check
// stores without asking the endpoint; a 401 still stores nothing and
// asks nothing.
func TestLoginCheckUnreachable(t *testing.T) {
	const key = "sk-unchecked-0123456789"
	chatOnly := httptest.NewServer(http.NotFoundHandler())
	defer chatOnly.Close()
	const ask = "Store the key anyway? [y/N] "
	for _, tc := range []struct {
		name, base, answer string
		stored             bool
	}{
		{"refused, no", closedURL(t), "n", false},
		{"refused, return", closedURL(t), "", false},
		{"404, yes", chatOnly.URL, "y", true},
		{"refused, yes", closedURL(t), "yes", true},
	} {
		cfg := t.TempDir()
		code, shown := loginPTYArgs(t, cfg, []string{"--base-url", tc.base, "login"}, key, [2]string{ask, tc.answer})
		if !strings.Contains(shown, "Could not check the key: ") {
			t.Errorf("%s: the terminal does not say the check failed: %q", tc.name, shown)
		}
		got := storedKey(t, cfg, tc.base)
		if tc.stored && (code != 0 || got != key || !strings.Contains(shown, "could not be reached). Stored in ")) {
			t.Errorf("%s: exit %d, stored %q, terminal %q; want the key stored", tc.name, code, got, shown)
		}
		if !tc.stored && (code != 1 || got != "" || !strings.Contains(shown, "nothing was stored")) {
			t.Errorf("%s: exit %d, stored %q, terminal %q; want nothing stored, exit 1", tc.name, code, got, shown)
		}
	}

	// --no-check, after the subcommand or after its flags: no request.
	ep := newFakeEndpoint(t, "sk-the-real-one-000")
	for _, args := range [][]string{{"login", "--base-url", ep.srv.URL, "--no-check"}, {"--base-url", ep.srv.URL, "login", "-no-check"}} {
		cfg := t.TempDir()
		code, shown := loginPTYArgs(t, cfg, args, key)
		if code != 0 || storedKey(t, cfg, ep.srv.URL) != key || !strings.Contains(shown, "Not checked (--no-check)") || strings.Contains(shown, ask) {
			t.Errorf("%q: exit %d, terminal %q", args, code, shown)
		}
	}
	if n := ep.count("GET /models"); n != 0 {
		t.Errorf("--no-check asked the endpoint %d times", n)
	}
	// A rejected key: nothing stored, nothing asked.
	cfg := t.TempDir()
	code, shown := loginPTY(t, cfg, ep.srv.URL, key)
	if code != 1 || storedKey(t, cfg, ep.srv.URL) != "" || strings.Contains(shown, ask) || !strings.Contains(shown, "rejected the key (HTTP 401") {
		t.Errorf("a rejected key: exit %d, terminal %q", code, shown)
	}
}
