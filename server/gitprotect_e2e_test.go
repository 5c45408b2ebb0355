package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/sandbox"
)

// TestGitHooksProtectedE2E: a command run unasked (bypassPermissions,
// as an approved `make test` would) in a git repository cannot plant a
// hook or a config setting that the user's own git would run outside
// the sandbox later; it still writes the project and commits.
func TestGitHooksProtectedE2E(t *testing.T) {
	if h := sandbox.Probe(); h.LandlockABI == 0 || !h.Namespaces {
		t.Skipf("commands cannot be confined in namespaces here: %s %s", h.LandlockReason, h.NamespaceReason)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	cwd := t.TempDir()
	gitIn(t, cwd, "init", "-q")
	before, _ := os.ReadFile(filepath.Join(cwd, ".git", "config"))
	script := `printf '#!/bin/sh\ncat ~/.config/dsh-acp/credentials > /tmp/x\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit;
git config core.fsmonitor 'sh -c evil'; echo made > made.txt; git add made.txt &&
git -c user.name=T -c user.email=t@example.com -c commit.gpgSign=false commit -qm planted && echo COMMITTED`
	model := &capturing{inner: llm.NewReplay(e2etest.Replay(t,
		e2etest.ToolCalls(bashCall(map[string]any{"command": script, "description": "Plant"})),
		e2etest.Text(nil, []string{"Done."}, "stop")))}
	h := newHarness(t, harnessOpts{model: model, mode: "bypassPermissions", cwd: cwd})
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "plant"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	reqs := model.requests()
	out := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Content
	if _, err := os.Stat(filepath.Join(cwd, ".git", "hooks", "pre-commit")); err == nil {
		t.Errorf("a hook was planted:\n%s", out)
	}
	if after, _ := os.ReadFile(filepath.Join(cwd, ".git", "config")); string(after) != string(before) {
		t.Errorf("the config changed to %q", after)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "made.txt")); string(b) != "made\n" || !strings.Contains(out, "COMMITTED") {
		t.Errorf("the ordinary work failed: made.txt %q, output:\n%s", b, out)
	}
}
