package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestProcessModelsListAbandoned: with an endpoint whose /models never
// answers, session/new answers after its 1 s wait with the configured
// model, and the process still exits 0 at once after stdin EOF (the
// request is abandoned, not waited for).
func TestProcessModelsListAbandoned(t *testing.T) {
	var asked, ended atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/models" {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		<-r.Context().Done()
		ended.Add(1)
	}))
	defer srv.Close()
	p := startProcWith(t, []string{"DSH_API_KEY=sk-process-test-0123456789"}, "--base-url", srv.URL, "--model", "my-model")
	p.send(t, initLine)
	p.next(t)
	start := time.Now()
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	var res struct {
		Result struct {
			ConfigOptions []struct {
				ID           string `json:"id"`
				CurrentValue string `json:"currentValue"`
				Options      []struct {
					Value string `json:"value"`
				} `json:"options"`
			} `json:"configOptions"`
		} `json:"result"`
	}
	if err := json.Unmarshal(p.next(t), &res); err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	p.commands(t) // the slash commands follow the answer
	if waited < 900*time.Millisecond {
		t.Errorf("session/new answered after %v, before its 1 s wait for the model list", waited)
	}
	opts := res.Result.ConfigOptions
	if len(opts) == 0 || opts[0].ID != "model" || opts[0].CurrentValue != "my-model" || len(opts[0].Options) != 1 {
		t.Errorf("config options %+v, want the model option with my-model alone", opts)
	}
	if asked.Load() != 1 {
		t.Errorf("/models asked %d times", asked.Load())
	}
	p.stdin.Close()
	code, took := p.wait(t)
	// Promptly: without waiting for the /models request, which stays open
	// (the bound leaves room for a loaded machine).
	if code != 0 || took > 10*time.Second {
		t.Errorf("exit code %d after %v, want 0 promptly; stderr:\n%s", code, took, p.stderr)
	}
	deadline := time.Now().Add(30 * time.Second)
	for ended.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if ended.Load() != 1 {
		t.Error("the /models request was still open after the process exited")
	}
}

// TestConfigFlags: --thinking, --context-window and --prices are
// checked; a bad value exits 2 with a message naming the flag (and the
// file).
func TestConfigFlags(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(junk, []byte(`{"models":{"m":{"input":1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--thinking", "ultra"}, {"--context-window", "0"}, {"--context-window", "lots"},
		{"--prices", junk}, {"--prices", junk + ".missing"},
	} {
		cmd := exec.Command(binary(t), args...)
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), strings.TrimPrefix(args[0], "-")) {
			t.Errorf("%q: %v, %s", args, err, out)
		}
		if args[0] == "--prices" && !strings.Contains(string(out), filepath.Base(args[1])) {
			t.Errorf("%q: the message does not name the file: %s", args, out)
		}
	}
	c, err := parseConfig([]string{"--thinking", "max", "--context-window", "200000"}, func(string) (string, bool) { return "", false }, os.Stderr)
	if err != nil || c.Thinking != "max" || c.ContextWindow != 200000 || len(c.Catalog.Offer) == 0 {
		t.Errorf("parsed %+v, %v (the default endpoint is DeepSeek's: its catalog applies)", c, err)
	}
	c, err = parseConfig([]string{"--base-url", "http://127.0.0.1:1"}, func(string) (string, bool) { return "", false }, os.Stderr)
	if err != nil || len(c.Catalog.Offer) != 0 {
		t.Errorf("another endpoint got DeepSeek's catalog: %+v, %v", c.Catalog, err)
	}
}
