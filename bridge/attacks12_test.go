package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/toolbash"
	"github.com/dsh-acp/dsh-acp/toolfs"
	"github.com/dsh-acp/dsh-acp/tools"
)

// deepRig is breakRig with the layout: cwd holds a/b and a link
// deep -> a/b, so deep/../../../X is cwd's parent's X (outside) to the
// kernel; out is that parent.
func deepRig(t *testing.T, mode string) (*tools.Registry, *fakeEditor, *liveSession, string, string) {
	t.Helper()
	reg, fe, s, cwd := breakRig(t, mode)
	if err := os.MkdirAll(filepath.Join(cwd, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a/b", filepath.Join(cwd, "deep")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Dir(permission.Resolve(cwd, cwd))
	return reg, fe, s, cwd, out
}

func run(reg *tools.Registry, s *liveSession, name, args string) tools.Result {
	return reg.Execute(context.Background(), &tools.Exec{CallID: "c1", Name: name, Args: json.RawMessage(args), Session: s.agent.Tools})
}

func jsonArgs(kv map[string]any) string { b, _ := json.Marshal(kv); return string(b) }

// Issue 12, `..` after a symlink: read (plan mode too), write and edit
// (acceptEdits) through deep/../../../X ask, the prompt names the real
// path, and nothing outside is read out or changed when the user says no.
func TestAttack12SymlinkDotDotFileTools(t *testing.T) {
	for _, mode := range []string{"plan", "default", "acceptEdits", "bypassPermissions"} {
		reg, fe, s, _, out := deepRig(t, mode)
		secret := filepath.Join(out, "secret.txt")
		os.WriteFile(secret, []byte("TOP SECRET\n"), 0o600)
		res := run(reg, s, "read", `{"file_path":"deep/../../../secret.txt"}`)
		if fe.asked != 1 || strings.Contains(tools.JoinText(res.Content), "TOP SECRET") {
			t.Errorf("%s: read through deep/../../..: asked %d, result %q", mode, fe.asked, tools.JoinText(res.Content))
		}
		if locs := fe.last.ToolCall.Locations; len(locs) != 1 || locs[0].Path != secret {
			t.Errorf("%s: the prompt's locations %+v, want the real path %s", mode, locs, secret)
		}
		if texts := promptTexts(fe); !strings.Contains(texts, "Outside the project: "+secret) {
			t.Errorf("%s: the prompt says %q, want the real outside path", mode, texts)
		}
	}
	for _, mode := range []string{"default", "acceptEdits", "bypassPermissions"} {
		reg, fe, s, _, out := deepRig(t, mode)
		target := filepath.Join(out, "X-"+mode)
		run(reg, s, "write", `{"file_path":"deep/../../../X-`+mode+`","content":"pwned\n"}`)
		if _, err := os.Stat(target); err == nil || fe.asked != 1 {
			t.Errorf("%s: write through deep/../../..: asked %d, %s exists: %v", mode, fe.asked, target, err == nil)
		}
		os.WriteFile(target, []byte("keep\n"), 0o600)
		fe.option = "allow-once"
		run(reg, s, "read", `{"file_path":"deep/../../../X-`+mode+`"}`)
		fe.option = "reject-once"
		run(reg, s, "edit", `{"file_path":"deep/../../../X-`+mode+`","old_string":"keep","new_string":"pwned"}`)
		if b, _ := os.ReadFile(target); string(b) != "keep\n" || fe.asked != 3 {
			t.Errorf("%s: edit through deep/../../..: asked %d, file %q", mode, fe.asked, b)
		}
	}
	// In the project, deep/../../X is cwd/X (the kernel's reading): in
	// acceptEdits it runs unasked and writes that file, never out/X.
	reg, fe, s, cwd, out := deepRig(t, "acceptEdits")
	if res := run(reg, s, "write", `{"file_path":"deep/../../Y","content":"in\n"}`); res.IsError || fe.asked != 0 {
		t.Fatalf("write deep/../../Y: asked %d, %s", fe.asked, tools.JoinText(res.Content))
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "Y")); string(b) != "in\n" {
		t.Errorf("cwd/Y = %q", b)
	}
	if _, err := os.Stat(filepath.Join(out, "Y")); err == nil {
		t.Error("wrote out/Y")
	}
}

// promptTexts joins the text items of the last permission card.
func promptTexts(fe *fakeEditor) string {
	var b strings.Builder
	for _, c := range fe.last.ToolCall.Content {
		if item, ok := c.(acp.Content); ok {
			b.WriteString(item.Content.Text)
		}
	}
	return b.String()
}

// Issue 12: after "Always allow" for write, a write through deep/../../..
// still asks (the remembered answer covers the project only).
func TestAttack12AlwaysAllowWriteThenOutside(t *testing.T) {
	reg, fe, s, _, out := deepRig(t, "default")
	fe.option = "allow-always"
	if res := run(reg, s, "write", `{"file_path":"in.txt","content":"x\n"}`); res.IsError {
		t.Fatal(tools.JoinText(res.Content))
	}
	fe.option = "reject-once"
	run(reg, s, "write", `{"file_path":"deep/../../../X","content":"pwned\n"}`)
	if _, err := os.Stat(filepath.Join(out, "X")); err == nil || fe.asked != 2 {
		t.Errorf("asked %d, outside file written: %v", fe.asked, err == nil)
	}
}

// Issue 12: a bash workdir through deep/../../.. asks in every mode but
// plan (refused), and nothing runs when the user says no.
func TestAttack12SymlinkDotDotWorkdir(t *testing.T) {
	for _, mode := range []string{"plan", "default", "acceptEdits", "bypassPermissions"} {
		reg, fe, s, _, out := deepRig(t, mode)
		marker := filepath.Join(out, "ran-"+mode)
		s.perm.mem.Remember(s.perm.call(reg.Resolve(s.agent.Tools, "c", "bash", json.RawMessage(`{"command":"touch x"}`))), true)
		run(reg, s, "bash", jsonArgs(map[string]any{"command": "touch ran-" + mode, "description": "d", "workdir": "deep/../../.."}))
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%s: the command ran in %s", mode, out)
		}
		if want := map[bool]int{true: 0, false: 1}[mode == "plan"]; fe.asked != want {
			t.Errorf("%s: asked %d, want %d", mode, fe.asked, want)
		}
	}
}

// Issue 12: hidden evaluation under a remembered prefix, escaped, quoted
// and variable redirects, and outside arguments ask; rejected, nothing
// runs and nothing changes outside. bypassPermissions asks for the
// redirects (no prefix needed there) and runs the rest.
func TestAttack12ShellText(t *testing.T) {
	type attack struct {
		cmd    string
		bypass bool // also asked in bypassPermissions
	}
	mk := func(cwd, out string) []attack {
		esc := strings.ReplaceAll(out, "/", `\/`)
		return []attack{
			{`y='a[$(touch pwned)]'; [[ $y -eq 0 ]]; echo hi`, false},
			{`[[ -v 'a[$(touch pwned)]' ]]; echo hi`, false},
			{`y='a[$(touch pwned)]'; for ((i=y; i<1; i++)); do echo; done`, false},
			{`y='$(touch pwned)'; a=([$y]=1); echo hi`, false},
			{`echo pwned > .\./pwned`, true},
			{`echo pwned > ` + esc + `\/pwned`, true},
			{`echo pwned > "../pwned"`, true},
			{`echo pwned > '` + out + `/pwned'`, true},
			{`echo pwned > $PWD/../pwned`, true},
			{`cp ` + cwd + `/src.txt ` + out + `/pwned`, false},
			{`cp src.txt ../pwned`, false},
		}
	}
	for _, mode := range []string{"default", "acceptEdits", "bypassPermissions"} {
		reg, fe, s, cwd, out := deepRig(t, mode)
		os.WriteFile(filepath.Join(cwd, "src.txt"), []byte("x\n"), 0o644)
		if mode != "bypassPermissions" {
			for _, p := range []string{"echo", "cp a b"} {
				s.perm.mem.Remember(s.perm.call(reg.Resolve(s.agent.Tools, "c", "bash", json.RawMessage(jsonArgs(map[string]any{"command": p})))), true)
			}
		}
		for _, a := range mk(cwd, out) {
			if mode == "bypassPermissions" && !a.bypass {
				continue
			}
			asked := fe.asked
			run(reg, s, "bash", jsonArgs(map[string]any{"command": a.cmd, "description": "d"}))
			if fe.asked != asked+1 {
				t.Errorf("%s: %q ran without asking", mode, a.cmd)
			}
			for _, p := range []string{filepath.Join(cwd, "pwned"), filepath.Join(out, "pwned")} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s: %q made %s", mode, a.cmd, p)
					os.Remove(p)
				}
			}
		}
	}
}

// Issue 12: in acceptEdits, an edit of .git/config (core.fsmonitor, run
// by the next `git status`) asks, as do writes of hooks and .envrc; the
// file is unchanged when the user says no. In bypassPermissions they run.
func TestAttack12FilesThatRunCode(t *testing.T) {
	reg, fe, s, cwd, _ := deepRig(t, "acceptEdits")
	cfg := filepath.Join(cwd, ".git", "config")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, []byte("[core]\n\tbare = false\n"), 0o644)
	run(reg, s, "read", `{"file_path":".git/config"}`)
	if fe.asked != 0 {
		t.Fatalf("reading .git/config asked")
	}
	run(reg, s, "edit", `{"file_path":".git/config","old_string":"bare = false","new_string":"bare = false\n\tfsmonitor = touch pwned"}`)
	if b, _ := os.ReadFile(cfg); strings.Contains(string(b), "fsmonitor") || fe.asked != 1 {
		t.Errorf("edit .git/config in acceptEdits: asked %d, file %q", fe.asked, b)
	}
	if texts := promptTexts(fe); !strings.Contains(texts, "Runs code: "+permission.Resolve(cwd, cfg)) {
		t.Errorf("the prompt says %q", texts)
	}
	for _, p := range []string{".git/hooks/pre-commit", ".envrc"} {
		run(reg, s, "write", jsonArgs(map[string]any{"file_path": p, "content": "touch pwned\n"}))
		if _, err := os.Stat(filepath.Join(cwd, p)); err == nil {
			t.Errorf("wrote %s in acceptEdits without asking", p)
		}
	}
	if fe.asked != 3 {
		t.Errorf("asked %d times, want 3", fe.asked)
	}
	reg, fe, s, cwd, _ = deepRig(t, "bypassPermissions")
	if res := run(reg, s, "write", `{"file_path":".envrc","content":"use flake\n"}`); res.IsError || fe.asked != 0 {
		t.Errorf("bypassPermissions: asked %d, %s", fe.asked, tools.JoinText(res.Content))
	}
	if b, err := os.ReadFile(filepath.Join(cwd, ".envrc")); err != nil || string(b) != "use flake\n" {
		t.Errorf("bypassPermissions: .envrc holds %q (%v), want the written text", b, err)
	}
}

// Issue 12, item 10: "Always allow" answers are logged and restored by
// session/load, in another bridge (another process) on the same state
// directory.
func TestAlwaysAllowRestoredByLoad(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	mk := func() (*Bridge, *tools.Registry, *fakeEditor) {
		reg := tools.NewRegistry()
		for _, tl := range toolfs.Tools() {
			_ = reg.Register(tl)
		}
		sh := toolbash.New(toolbash.Options{})
		t.Cleanup(sh.Shutdown)
		for _, tl := range sh.Tools() {
			_ = reg.Register(tl)
		}
		fe := &fakeEditor{option: "allow-always"}
		b := New(Config{Tools: reg, Mode: "default", StateDir: state})
		reg.Use(b.Permission)
		b.client = fe
		return b, reg, fe
	}
	b1, reg1, fe1 := mk()
	s1 := b1.openSession("sess_rules", cwd, nil)
	run(reg1, s1, "bash", `{"command":"git status","description":"d"}`)
	run(reg1, s1, "write", `{"file_path":"a.txt","content":"x\n"}`)
	fe1.option = "reject-always"
	run(reg1, s1, "bash", `{"command":"rm -rf build","description":"d"}`)
	if fe1.asked != 3 {
		t.Fatalf("asked %d", fe1.asked)
	}
	b1.Close()
	path := session.LogPath(state, cwd, "sess_rules")
	ld, err := session.ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	var rules []session.PermissionRule
	for _, ev := range ld.Events {
		if r, ok := ev.Data.(session.PermissionRule); ok {
			rules = append(rules, r)
		}
	}
	if len(rules) != 3 || rules[0].Prefixes[0] != "git status" || !rules[1].Whole || rules[2].Allow {
		t.Fatalf("logged rules %+v", rules)
	}

	// session/load and session/resume restore them alike.
	for _, replay := range []bool{true, false} {
		b2, reg2, fe2 := mk()
		fe2.option = "reject-once"
		if _, err := b2.reopen(context.Background(), reopenReq{id: "sess_rules", cwd: cwd}, replay); err != nil {
			t.Fatal(err)
		}
		s2 := b2.session("sess_rules")
		if res := run(reg2, s2, "bash", `{"command":"git status --short","description":"d"}`); res.IsError || fe2.asked != 0 {
			t.Errorf("replay %v: git status after reopen: asked %d, %s", replay, fe2.asked, tools.JoinText(res.Content))
		}
		if res := run(reg2, s2, "write", fmt.Sprintf(`{"file_path":"b-%v.txt","content":"y\n"}`, replay)); res.IsError || fe2.asked != 0 {
			t.Errorf("replay %v: write after reopen: asked %d, %s", replay, fe2.asked, tools.JoinText(res.Content))
		}
		if res := run(reg2, s2, "bash", `{"command":"rm -rf build","description":"d"}`); !res.IsError || fe2.asked != 0 || !strings.Contains(tools.JoinText(res.Content), "refused") {
			t.Errorf("replay %v: rm after reopen: asked %d, %s", replay, fe2.asked, tools.JoinText(res.Content))
		}
		if run(reg2, s2, "bash", `{"command":"git log","description":"d"}`); fe2.asked != 1 {
			t.Errorf("replay %v: git log after reopen: asked %d, want 1", replay, fe2.asked)
		}
		b2.Close()
	}
}
