package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/sandbox"
	"github.com/dsh-acp/dsh-acp/server"
	"github.com/dsh-acp/dsh-acp/session"
)

// deepProject lays out base/proj (the session cwd) with a/b, a link
// deep -> a/b and a link src -> a (a folder inside, the legitimate
// case), and base/secret.txt outside: to the kernel deep/../.. is proj
// and deep/../../.. is base, while cleaning the text gives base and
// base's parent.
func deepProject(t *testing.T) (base, cwd string) {
	t.Helper()
	base = t.TempDir()
	cwd = filepath.Join(base, "proj")
	for p, text := range map[string]string{
		"proj/a/b/inner.txt": "NEEDLE inner\n",
		"proj/a/mid.txt":     "NEEDLE mid\n",
		"proj/top.txt":       "NEEDLE top\n",
		"secret.txt":         "NEEDLE api_key = sk-outside\n",
	} {
		full := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"deep": "a/b", "src": "a"} {
		if err := os.Symlink(target, filepath.Join(cwd, link)); err != nil {
			t.Fatal(err)
		}
	}
	return base, cwd
}

// finalCards returns the final card of every tool call, by id, as JSON.
func finalCards(h *harness) map[string]string {
	out := map[string]string{}
	for _, u := range h.sessionUpdates() {
		if c, _ := toolCard(u); isFinal(u) {
			b, _ := json.Marshal(c)
			out[c.ToolCallID] = string(b)
		}
	}
	return out
}

// TestAttack23SearchSymlinkDotDot: grep and glob judge and search one
// path, the kernel's resolution of the argument. deep/../.. is inside
// (proj) and runs unasked, searching proj and nothing above it;
// deep/../../.. is outside and asks (in default and plan mode), a
// rejected search reading nothing; a search through a symlink to a
// folder inside still works.
func TestAttack23SearchSymlinkDotDot(t *testing.T) {
	for _, mode := range []string{"default", "plan"} {
		t.Run(mode, func(t *testing.T) {
			base, cwd := deepProject(t)
			steps := [][2]string{
				{"grep", `{"pattern":"NEEDLE","path":"deep/../..","output_mode":"content"}`},
				{"glob", `{"pattern":"**/*.txt","path":"deep/../.."}`},
				{"grep", `{"pattern":"NEEDLE","path":"deep/../../..","output_mode":"content"}`},
				{"glob", `{"pattern":"*.txt","path":"deep/../../.."}`},
				{"grep", `{"pattern":"NEEDLE","path":"src","output_mode":"content"}`},
				{"glob", `{"pattern":"src/b/*.txt"}`},
			}
			var bodies, ids []string
			for i, st := range steps {
				bodies = append(bodies, e2etest.ToolCallsAt(i, st))
				ids = append(ids, e2etest.CallID(i, 0, st[0], st[1]))
			}
			rec := e2etest.Replay(t, append(bodies, e2etest.Text(nil, []string{"Done."}, "stop"))...)
			h := newHarness(t, harnessOpts{replay: rec, mode: mode, cwd: cwd})
			pc := &permissionClient{outcome: "reject-once"}
			h.client.OnRequest = pc.handle
			sid := h.start(harnessOpts{})
			if stop, err := h.prompt(sid, "search"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			if pc.count() != 2 {
				t.Fatalf("asked %d times, want twice (the two searches of deep/../../..)", pc.count())
			}
			for _, req := range pc.asked {
				if b, _ := json.Marshal(req); !strings.Contains(string(b), "Outside the project: "+base) {
					t.Errorf("the request does not name the real outside path %s: %s", base, b)
				}
			}
			cards := finalCards(h)
			for i, id := range ids {
				if strings.Contains(cards[id], "sk-outside") || strings.Contains(cards[id], "secret.txt") {
					t.Errorf("call %d read outside the project: %s", i, cards[id])
				}
			}
			wants := []struct {
				status string
				has    []string
			}{
				{"completed", []string{"a/b/inner.txt:1:NEEDLE inner", "top.txt:1:NEEDLE top"}},
				{"completed", []string{"a/b/inner.txt", "top.txt"}},
				{"failed", nil},
				{"failed", nil},
				{"completed", []string{"a/b/inner.txt:1:NEEDLE inner", "a/mid.txt:1:NEEDLE mid"}},
				{"completed", []string{"Found 1 file", "inner.txt"}},
			}
			for i, w := range wants {
				if !strings.Contains(cards[ids[i]], `"status":"`+w.status+`"`) {
					t.Errorf("call %d (%s): want %s, got %s", i, steps[i][1], w.status, cards[ids[i]])
				}
				for _, s := range w.has {
					if !strings.Contains(cards[ids[i]], s) {
						t.Errorf("call %d (%s): no %q in %s", i, steps[i][1], s, cards[ids[i]])
					}
				}
			}
		})
	}
}

// TestAttack23ReviewFilter: .git/config defines a filter driver that
// would write the environment outside the project (commands cannot
// write the config where they get namespaces, so it is set here, as a
// host without them, or the repository's author, would leave it); a
// command the model runs marks the tracked file for it and changes the
// file; then the user types /review. The
// agent's own git runs with the filter turned off and in the sandbox:
// the review shows the change and nothing is written outside. The
// legitimate case is TestReviewCommand.
func TestAttack23ReviewFilter(t *testing.T) {
	cwd, outside := t.TempDir(), t.TempDir()
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("DSH_API_KEY", "sk-from-the-agent")
	writeFile(t, filepath.Join(cwd, "a.txt"), "one\n")
	git(t, cwd, "init", "-q")
	git(t, cwd, "add", "a.txt")
	git(t, cwd, "commit", "-q", "-m", "first")
	leak := filepath.Join(outside, "leak")
	git(t, cwd, "config", "filter.x.clean", fmt.Sprintf("sh -c 'env > %s; cat'", leak))
	plant := `echo 'a.txt filter=x' > .gitattributes && echo two > a.txt`
	rec := &capturing{inner: llm.NewReplay(e2etest.Replay(t,
		e2etest.LiveToolCall(nil, 1, "bash", jsonObject(t, map[string]any{"command": plant, "description": "Set up"}), small),
		e2etest.LiveText(nil, []string{"Set up."}, small),
		e2etest.LiveText(nil, []string{"a.txt: one became two."}, small),
	))}
	h := newHarness(t, harnessOpts{model: rec, cwd: cwd})
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "set it up"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, ".gitattributes")); err != nil || !strings.Contains(string(b), "filter=x") {
		t.Fatalf("the command did not mark the file for the filter: %q, %v", b, err)
	}
	if stop, err := h.prompt(sid, "/review"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("/review = %q, %v", stop, err)
	}
	reqs := rec.requests()
	p := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Content
	for _, want := range []string{"modified:   a.txt", "-one\n+two"} {
		if !strings.Contains(p, want) {
			t.Errorf("the review prompt lacks %q:\n%s", want, p)
		}
	}
	if b, err := os.ReadFile(leak); err == nil {
		t.Fatalf("the filter ran during /review and wrote outside the project: %q", b)
	}
}

// jsonObject is v as JSON text.
func jsonObject(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAttack23AlwaysAllowMakeEval: "Always allow" on `make test` (the
// request names the prefix it remembers) covers `make test` again, but
// not `make test --eval=...` nor `make test SHELL=...`, which ask again
// (rejected here: nothing of them runs), and `go test -exec=...` after
// "Always allow" on `go test` asks too.
func TestAttack23AlwaysAllowMakeEval(t *testing.T) {
	cwd := t.TempDir()
	writeFile(t, filepath.Join(cwd, "Makefile"), "test:\n\techo ok >> ran-test\n")
	writeFile(t, filepath.Join(cwd, "evil.sh"), "#!/bin/sh\ntouch pwned-shell\n")
	if err := os.Chmod(filepath.Join(cwd, "evil.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	steps := []string{
		"make test",
		`make test --eval='x := $(shell touch pwned-eval)'`,
		"make test SHELL=./evil.sh",
		"make test",
	}
	var bodies []string
	for i, cmd := range steps {
		bodies = append(bodies, e2etest.ToolCallsAt(i, [2]string{"bash", jsonObject(t, map[string]any{"command": cmd, "description": "Test"})}))
	}
	rec := e2etest.Replay(t, append(bodies, e2etest.Text(nil, []string{"Done."}, "stop"))...)
	h := newHarness(t, harnessOpts{replay: rec, mode: "default", cwd: cwd})
	var (
		mu    sync.Mutex
		asked []acp.RequestPermissionRequest
	)
	h.client.OnRequest = func(method string, params json.RawMessage) (any, error) {
		var req acp.RequestPermissionRequest
		_ = json.Unmarshal(params, &req)
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req)
		answer := "reject-once"
		if len(asked) == 1 {
			answer = "allow-always"
		}
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: "selected", OptionID: answer}}, nil
	}
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "test"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 3 {
		t.Fatalf("asked %d times, want 3 (make test, then the --eval and SHELL= ones)", len(asked))
	}
	for _, o := range asked[0].Options {
		if o.OptionID == "allow-always" && o.Name != "Always allow `make test`" {
			t.Errorf("the allow-always option is named %q", o.Name)
		}
	}
	for i, want := range []string{"`--eval=x := $(shell touch pwned-eval)` makes `make test` run other code", "`SHELL=./evil.sh` makes `make test` run other code"} {
		b, _ := json.Marshal(asked[i+1].ToolCall)
		if !strings.Contains(string(b), "`make test` is allowed always, but "+strings.ReplaceAll(want, `"`, `\"`)) {
			t.Errorf("request %d does not say why it asks again (%q): %s", i+2, want, b)
		}
	}
	for _, f := range []string{"pwned-eval", "pwned-shell"} {
		if _, err := os.Stat(filepath.Join(cwd, f)); err == nil {
			t.Errorf("%s exists: a rejected command ran", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "ran-test")); string(b) != "ok\nok\n" {
		t.Errorf("ran-test = %q, want make test run twice (the second time unasked)", b)
	}
}

// TestAttack23MCPReadOnlyHint: a server's readOnlyHint is a claim. In
// default mode its tool runs unasked on a plain argument, but asks when
// an argument names a path outside the project (rejected: the server
// never sees the call); in plan mode an untrusted server's hinted tool
// is refused (TestMCPPermissionModes has the trusted case).
func TestAttack23MCPReadOnlyHint(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "x")
	for _, mode := range []string{"default", "plan"} {
		t.Run(mode, func(t *testing.T) {
			plain := [2]string{"mcp__notes__read_note", `{"name":"todo"}`}
			out := [2]string{"mcp__notes__read_note", jsonObject(t, map[string]any{"name": outside})}
			dots := [2]string{"mcp__notes__read_note", `{"name":"../../../x"}`}
			model := newCapturingModel(t, e2etest.ToolCalls(plain, out, dots), e2etest.Text(nil, []string{"Done."}, "stop"))
			h := newHarness(t, harnessOpts{model: model, mode: mode})
			pc := &permissionClient{outcome: "reject-once"}
			h.client.OnRequest = pc.handle
			events := filepath.Join(t.TempDir(), "events")
			h.initialize()
			sid, _ := h.newMCPSession(stdioMCP(t, "notes", events))
			if stop, err := h.prompt(sid, "read"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt = %q, %v", stop, err)
			}
			b, _ := os.ReadFile(events)
			seen := string(b)
			if mode == "plan" {
				if pc.count() != 0 || strings.Contains(seen, "read_note") {
					t.Errorf("plan: asked %d, the server saw %q", pc.count(), seen)
				}
				return
			}
			if pc.count() != 2 {
				t.Fatalf("asked %d times, want 2 (the two outside paths)", pc.count())
			}
			if body, _ := json.Marshal(pc.asked[0].ToolCall); !strings.Contains(string(body), "Outside the project: "+outside) {
				t.Errorf("the request does not name the outside path: %s", body)
			}
			if !strings.Contains(seen, "read_note todo") || strings.Contains(seen, "read_note "+outside) || strings.Contains(seen, "read_note ../") {
				t.Errorf("the server saw %q", seen)
			}
		})
	}
}

// TestAttack23BypassUnsandboxed: in bypassPermissions a command asking
// to run outside the sandbox (`touch ../x`) still asks; rejected, it
// does not run.
func TestAttack23BypassUnsandboxed(t *testing.T) {
	base := t.TempDir()
	cwd := filepath.Join(base, "proj")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := e2etest.Replay(t,
		e2etest.ToolCalls(bashCall(map[string]any{"command": "touch ../x", "description": "Touch", "dangerously_disable_sandbox": true})),
		e2etest.Text(nil, []string{"Done."}, "stop"))
	h := newHarness(t, harnessOpts{replay: rec, mode: "bypassPermissions", cwd: cwd})
	pc := &permissionClient{outcome: "reject-once"}
	h.client.OnRequest = pc.handle
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "touch"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	if sandbox.Probe().LandlockABI > 0 && pc.count() != 1 {
		t.Errorf("asked %d times, want once", pc.count())
	}
	if _, err := os.Stat(filepath.Join(base, "x")); err == nil {
		t.Error("../x was written")
	}
}

// TestAttack23DeleteKilledMidway: a delete killed after it removed the
// log (simulated: the log is removed by hand, its lock and title stay)
// leaves nothing once the agent has run again: the start-up sweep (in
// the background; Close waits for it) removes the companions; a live
// session's files stay.
func TestAttack23DeleteKilledMidway(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessOpts{replay: e2etest.Replay(t, e2etest.Text(nil, []string{"One."}, "stop"), e2etest.Text(nil, []string{"Two."}, "stop")), stateDir: state, cwd: cwd})
	gone := h1.start(harnessOpts{})
	if _, err := h1.prompt(gone, "first"); err != nil {
		t.Fatal(err)
	}
	kept := h1.start(harnessOpts{})
	if _, err := h1.prompt(kept, "second"); err != nil {
		t.Fatal(err)
	}
	h1.stop()
	path := logOf(t, state, gone)
	writeFile(t, session.TitlePath(path), "first\n")
	writeFile(t, session.LockPath(path), "12345\n")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	keptLog := logOf(t, state, kept)
	h2 := newHarness(t, harnessOpts{replay: e2etest.Replay(t), stateDir: state, cwd: cwd, options: func(o *server.Options) { o.SweepAfter = -1 }})
	h2.initialize()
	h2.stop()
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), filepath.Base(path)+"*"))
	if len(left) != 0 {
		t.Errorf("left after the start-up sweep: %q", left)
	}
	if _, err := os.Stat(keptLog); err != nil {
		t.Errorf("the live session's log: %v", err)
	}
}

// TestAttack23SecretsHidden: a command run in bypassPermissions cannot
// read the credentials file nor the session logs of the state folder
// (its own session's included), and still reads the project and HOME's
// other files.
func TestAttack23SecretsHidden(t *testing.T) {
	if h := sandbox.Probe(); h.LandlockABI == 0 {
		t.Skipf("commands cannot be confined here: %s", h.LandlockReason)
	}
	config, state, cwd := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	writeFile(t, filepath.Join(config, "dsh-acp", "credentials"), "api_key = sk-in-the-file\n")
	writeFile(t, filepath.Join(config, "other", "ok.txt"), "other-config-ok\n")
	writeFile(t, filepath.Join(cwd, "f.txt"), "project-ok\n")
	script := fmt.Sprintf("cat %s/dsh-acp/credentials; cat %s/*/*.jsonl | head -c 300; cat %s/other/ok.txt f.txt", config, state, config)
	model := &capturing{inner: llm.NewReplay(e2etest.Replay(t,
		e2etest.ToolCalls(bashCall(map[string]any{"command": script, "description": "Look"})),
		e2etest.Text(nil, []string{"Done."}, "stop")))}
	h := newHarness(t, harnessOpts{model: model, stateDir: state, cwd: cwd})
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "secret prompt text"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	reqs := model.requests()
	out := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Content
	if strings.Contains(out, "sk-in-the-file") || strings.Contains(out, "secret prompt text") || strings.Contains(out, `"type"`) {
		t.Errorf("the command read a secret:\n%s", out)
	}
	for _, want := range []string{"other-config-ok", "project-ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("the command's output lacks %q:\n%s", want, out)
		}
	}
}
