package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/toolbash"
	"github.com/dsh-acp/dsh-acp/toolfs"
	"github.com/dsh-acp/dsh-acp/tools"
)

func breakRig(t *testing.T, mode string) (*tools.Registry, *fakeEditor, *liveSession, string) {
	cwd := t.TempDir()
	reg := tools.NewRegistry()
	for _, tl := range toolfs.Tools() {
		_ = reg.Register(tl)
	}
	sh := toolbash.New(toolbash.Options{})
	t.Cleanup(sh.Shutdown)
	for _, tl := range sh.Tools() {
		_ = reg.Register(tl)
	}
	fe := &fakeEditor{option: "reject-once"}
	b := New(Config{Tools: reg, Mode: mode})
	reg.Use(b.Permission)
	b.client = fe
	s := b.openSession("s1", cwd, nil)
	return reg, fe, s, cwd
}

// The permission policy decodes arguments case-insensitively (encoding/json),
// the tools case-sensitively: a case-folded duplicate key shows the policy
// one path while the tool uses another.
func TestAttackFoldedKeyWriteOutsideWithoutAsking(t *testing.T) {
	reg, fe, s, _ := breakRig(t, "acceptEdits")
	outside := filepath.Join(t.TempDir(), "pwned.txt")
	args := fmt.Sprintf(`{"file_path":%q,"content":"pwned\n","FILE_PATH":"inside.txt"}`, outside)
	res := reg.Execute(context.Background(), &tools.Exec{CallID: "c1", Name: "write", Args: json.RawMessage(args), Session: s.agent.Tools})
	if _, err := os.Stat(outside); err == nil {
		t.Fatalf("wrote %s outside the project without asking (asked=%d): %s", outside, fe.asked, tools.JoinText(res.Content))
	}
}

func TestAttackFoldedKeyBashCommandSwap(t *testing.T) {
	reg, fe, s, cwd := breakRig(t, "default")
	// the user once chose "always allow" for `git status`
	s.perm.mem.Remember(s.perm.call(reg.Resolve(s.agent.Tools, "c", "bash", json.RawMessage(`{"command":"git status"}`))), true)
	args := `{"command":"touch pwned","description":"d","COMMAND":"git status"}`
	reg.Execute(context.Background(), &tools.Exec{CallID: "c1", Name: "bash", Args: json.RawMessage(args), Session: s.agent.Tools})
	if _, err := os.Stat(filepath.Join(cwd, "pwned")); err == nil {
		t.Fatalf("ran `touch pwned` without asking (asked=%d)", fe.asked)
	}
}

// A dangling symlink inside the project that names a path outside it:
// permission.Resolve stops at the link (EvalSymlinks fails) and calls it
// inside; toolfs follows it and creates the outside file.
func TestAttackDanglingSymlinkWriteOutside(t *testing.T) {
	reg, fe, s, cwd := breakRig(t, "acceptEdits")
	outside := filepath.Join(t.TempDir(), "created-outside.txt")
	if err := os.Symlink(outside, filepath.Join(cwd, "link.txt")); err != nil {
		t.Fatal(err)
	}
	res := reg.Execute(context.Background(), &tools.Exec{CallID: "c1", Name: "write",
		Args: json.RawMessage(`{"file_path":"link.txt","content":"pwned\n"}`), Session: s.agent.Tools})
	if _, err := os.Stat(outside); err == nil {
		t.Fatalf("created %s outside the project without asking (asked=%d): %s", outside, fe.asked, tools.JoinText(res.Content))
	}
}

// A background task started before the editor reloads (session/load of the
// live session) is not stopped by session/close afterwards: the reload
// builds a fresh tools session without the close hook toolbash registered.
func TestAttackBackgroundTaskSurvivesReloadThenClose(t *testing.T) {
	reg, _, s, cwd := breakRig(t, "bypassPermissions")
	b := s.perm.b
	// The task's pid as seen here (inside its PID namespace $$ is another
	// number): found by the argv[0] it runs under.
	marker := fmt.Sprintf("dsh-attack-%d", time.Now().UnixNano())
	res := reg.Execute(context.Background(), &tools.Exec{CallID: "c1", Name: "bash",
		Args: json.RawMessage(`{"command":"exec -a ` + marker + ` sleep 30","description":"d","run_in_background":true}`), Session: s.agent.Tools})
	if res.IsError {
		t.Fatal(tools.JoinText(res.Content))
	}
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pid = pidByArgv0(marker)
	}
	if pid == 0 {
		t.Fatal("no pid")
	}
	if _, err := b.reopen(context.Background(), reopenReq{id: s.id, cwd: cwd, live: s}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CloseSession(context.Background(), acp.CloseSessionRequest{SessionID: s.id}); err != nil {
		t.Fatal(err)
	}
	// SIGTERM ends the sleep at once (SIGKILL would follow 3 s later); the
	// bound leaves room for a loaded machine, far below the sleep's 30 s.
	for deadline := time.Now().Add(15 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("background task (pid %d) still running after session/close of the reloaded session", pid)
		}
	}
}

// pidByArgv0 is the pid of a process whose argv[0] is name, or 0.
func pidByArgv0(name string) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if argv0, _, _ := strings.Cut(string(b), "\x00"); argv0 == name {
			pid, _ := strconv.Atoi(d.Name())
			return pid
		}
	}
	return 0
}
