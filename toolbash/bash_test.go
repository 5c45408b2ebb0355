package toolbash

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/internal/unpriv"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestBashReferenceTexts runs the reference's render cases as real
// commands (§10 bash #1).
func TestBashReferenceTexts(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	s := tools.NewSession("s1", t.TempDir())
	for cmd, want := range map[string]string{
		"echo hello":                             "hello\n",
		"true":                                   "(no output)",
		"echo out; echo err >&2":                 "out\n[stderr]\nerr\n",
		"echo failing; exit 3":                   "failing\n[exit code: 3]",
		"printf 'a\\xffb'":                       "a\uFFFDb",
		"kill -USR1 $$":                          "(no output)\n[killed by signal: SIGUSR1]",
		"exec sh -c 'kill -SEGV $$'":             "(no output)\n[killed by signal: SIGSEGV]",
		"echo $NO_COLOR,$TERM,$PAGER,$GIT_PAGER": "1,dumb,cat,cat\n",
		"cat; echo stdin closed":                 "stdin closed\n",
	} {
		if got := g.run(s, cmd); got != want {
			t.Errorf("%q: got %q, want %q", cmd, got, want)
		}
	}
	res, _ := g.call(context.Background(), s, "bash", map[string]any{"command": "sleep 5", "description": "d", "timeoutMs": 100})
	if got := text(res); got != "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]" || res.IsError {
		t.Errorf("timeout: %q (isError %v)", got, res.IsError)
	}
}

// TestBashArgErrors: schema texts (bash #2) and value texts (bash #3).
func TestBashArgErrors(t *testing.T) {
	g := newRig(t)
	for _, c := range []struct {
		args map[string]any
		want string
		code bool
	}{
		{map[string]any{"command": "x", "description": "d", "timeoutMs": "5"}, `Error: invalid arguments: "timeoutMs" must be a number`, true},
		{map[string]any{"description": "d"}, `Error: invalid arguments: missing required property "command"`, true},
		{map[string]any{"command": "", "description": "d"}, "Error: invalid command: expected a non-empty string", false},
		{map[string]any{"command": "ls", "description": "  "}, "Error: invalid description: expected a non-empty string", false},
		{map[string]any{"command": "ls", "description": "d", "timeoutMs": 0}, "Error: invalid timeoutMs: expected a positive number, got 0", false},
		{map[string]any{"command": "ls", "description": "d", "timeoutMs": -2.5}, "Error: invalid timeoutMs: expected a positive number, got -2.5", false},
		{map[string]any{"task_id": ""}, `Error: invalid task_id: expected a string, got ""`, false},
	} {
		name := "bash"
		if _, ok := c.args["task_id"]; ok {
			name = "bash_output"
		}
		res, _ := g.call(context.Background(), nil, name, c.args)
		if got := text(res); got != c.want || !res.IsError || (res.Error != nil) != c.code {
			t.Errorf("%v: %q (error info %v), want %q", c.args, got, res.Error, c.want)
		}
	}
}

// TestBashSpawnAndAbortErrors: a bad workdir names ENOENT; a call whose
// context is already cancelled never starts.
func TestBashSpawnAndAbortErrors(t *testing.T) {
	g := newRig(t)
	s := tools.NewSession("s1", t.TempDir())
	res, _ := g.call(context.Background(), s, "bash", map[string]any{"command": "true", "description": "d", "workdir": "no/such/dir"})
	if !res.IsError || !strings.Contains(text(res), "ENOENT") {
		t.Errorf("bad workdir: %q", text(res))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, _ = g.call(ctx, s, "bash", map[string]any{"command": "touch made", "description": "d"})
	if text(res) != "Error: aborted before spawn: context canceled" {
		t.Errorf("pre-aborted: %q", text(res))
	}
	if _, err := os.Stat(filepath.Join(s.Cwd(), "made")); err == nil {
		t.Error("the command ran")
	}
}

// TestBashWorkdir: the session cwd by default, a relative workdir joined
// to it, an absolute one as is.
func TestBashWorkdir(t *testing.T) {
	g := newRig(t)
	cwd := t.TempDir()
	if err := os.Mkdir(filepath.Join(cwd, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	s := tools.NewSession("s1", cwd)
	for wd, want := range map[string]string{"": cwd, "sub": filepath.Join(cwd, "sub"), other: other} {
		res, _ := g.call(context.Background(), s, "bash", map[string]any{"command": "pwd -P", "description": "d", "workdir": wd})
		real, _ := filepath.EvalSymlinks(want)
		if got := text(res); got != real+"\n" {
			t.Errorf("workdir %q: pwd %q, want %q", wd, got, real)
		}
	}
}

// Issue 12: a workdir is resolved as the permission check resolves it
// (the kernel's way: a symlink, then ".."), so `deep/..` with deep -> a/b
// runs in a, not in the session cwd (which cleaning ".." as text gives);
// a workdir that escapes the cwd runs where the check saw it go.
func TestBashWorkdirSymlinkDotDot(t *testing.T) {
	g := newRig(t)
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	cwd := filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(cwd, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a/b", filepath.Join(cwd, "deep")); err != nil {
		t.Fatal(err)
	}
	s := tools.NewSession("s1", cwd)
	for wd, want := range map[string]string{"deep/..": filepath.Join(cwd, "a"), "deep/../..": cwd, "deep/../../..": root} {
		if judged := permission.Resolve(cwd, wd); judged != want {
			t.Fatalf("the check judges %q as %s, want %s", wd, judged, want)
		}
		res, _ := g.call(context.Background(), s, "bash", map[string]any{"command": "pwd -P", "description": "d", "workdir": wd})
		if got := text(res); got != want+"\n" {
			t.Errorf("workdir %q: pwd %q, want %q", wd, got, want)
		}
	}
	// A loop fails without running anything.
	if err := os.Symlink("loop", filepath.Join(cwd, "loop")); err != nil {
		t.Fatal(err)
	}
	res, _ := g.call(context.Background(), s, "bash", map[string]any{"command": "touch ran", "description": "d", "workdir": "loop/.."})
	if !res.IsError {
		t.Errorf("workdir through a loop ran: %q", text(res))
	}
	if _, err := os.Stat(filepath.Join(cwd, "ran")); err == nil {
		t.Error("the command ran")
	}
}

// TestBashSecretsFiltered: variables whose names mention KEY, SECRET or
// TOKEN never reach the command.
func TestBashSecretsFiltered(t *testing.T) {
	t.Setenv("DSH_API_KEY", "sk-live-123")
	t.Setenv("my_secret_thing", "hush")
	t.Setenv("GITHUB_TOKEN", "ghp_x")
	t.Setenv("HARMLESS_VAR", "visible")
	t.Setenv("TERM", "xterm-256color")
	g := newRig(t)
	got := g.run(nil, "env")
	for _, bad := range []string{"sk-live-123", "hush", "ghp_x", "xterm-256color"} {
		if strings.Contains(got, bad) {
			t.Errorf("the child saw %q:\n%s", bad, got)
		}
	}
	for _, want := range []string{"HARMLESS_VAR=visible", "TERM=dumb", "NO_COLOR=1"} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("the child lacks %s", want)
		}
	}
}

// TestBashAgentEnvironUnreadable: a command cannot read the agent's
// environment, API key included, at /proc/$PPID/environ (the agent is
// undumpable), while a process it starts reads the command's own environ
// (exec left the command dumpable). The agent is a child test process that
// holds DSH_API_KEY; as root, that child and so its commands run as an
// unprivileged user (unpriv.Run), since root reads every process's environ.
func TestBashAgentEnvironUnreadable(t *testing.T) {
	const secret = "sk-very-secret"
	if unpriv.InChild(t) {
		g := newRig(t)
		probe := `self=denied; cat /proc/$$/environ >/dev/null 2>&1 && self=readable
parent=denied; cat /proc/$PPID/environ >/dev/null 2>&1 && parent=readable
echo "self=$self parent=$parent"
tr '\0' '\n' < /proc/$PPID/environ 2>/dev/null | grep '^DSH_API_KEY=' || true`
		fmt.Println("OUT:" + g.run(tools.NewSession("s1", t.TempDir()), probe))
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/environ is Linux's")
	}
	out := unpriv.Run(t, "DSH_API_KEY="+secret)
	if strings.Contains(out, secret) {
		t.Fatalf("a bash command read the agent's API key from /proc/$PPID/environ:\n%s", out)
	}
	if !strings.Contains(out, "OUT:self=readable parent=denied") {
		t.Fatalf("want the command's environ readable and the agent's denied; the child printed:\n%s", out)
	}
}

// TestBashLargeOutputBounded: 4 MB of output gives a bounded, valid UTF-8
// result that says where the full output is; the spill file is private and
// complete; the live view showed at most LiveCap bytes of it, in chunks of
// at most LiveChunk: the first part, one note of what it left out, and a
// last part that ends with the model's tail.
func TestBashLargeOutputBounded(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	// 1 byte, then 2-byte characters: the cut at 64,000 bytes from the end
	// falls inside one.
	res, rec := g.call(context.Background(), nil, "bash", map[string]any{"command": "printf x; head -c 2000000 /dev/zero | tr '\\0' 'a' | sed 's/a/é/g'; echo", "description": "d"})
	got := text(res)
	if res.IsError {
		t.Fatalf("error: %q", got)
	}
	m := regexp.MustCompile(`\n\[output truncated; full output: (/\S+-stdout\.log)\]$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("no truncation line at the end: %q", got[max(0, len(got)-200):])
	}
	body := strings.TrimSuffix(got, m[0])
	if !utf8.ValidString(got) || len(body) > TailBytes || len(body) < TailBytes-3 || !strings.HasPrefix(body, "é") {
		t.Errorf("body: %d bytes, valid %v, starts %q", len(body), utf8.ValidString(got), body[:4])
	}
	st, err := os.Stat(m[1])
	if err != nil || st.Size() != 1+4000000+1 || st.Mode().Perm() != 0o600 {
		t.Errorf("spill file: %v, %v", st, err)
	}
	live := rec.all()
	total, notes := 0, []string{}
	for _, r := range live {
		total += len(r.text)
		if r.note != "" {
			notes = append(notes, r.note)
		}
		if len(r.text) > LiveChunk || !utf8.ValidString(r.text) || strings.ContainsRune(r.text, utf8.RuneError) {
			t.Fatalf("live report of %d bytes, valid %v", len(r.text), utf8.ValidString(r.text))
		}
	}
	if total > LiveCap || total < LiveCap-8 {
		t.Errorf("live view carried %d bytes of output, want about LiveCap (%d)", total, LiveCap)
	}
	wantNote := "[output truncated; " + strconv.Itoa(4000002-total) + " bytes left out here (a card shows at most 1 MiB of output); full output: " + m[1] + "]"
	if len(notes) != 1 || notes[0] != wantNote {
		t.Errorf("notes %q, want [%q]", notes, wantNote)
	}
	if shown := rec.text(); !strings.HasSuffix(shown, body) {
		t.Errorf("the live view does not end with the model's tail: ends %q", shown[max(0, len(shown)-100):])
	}
	if rec.late != 0 {
		t.Errorf("%d reports after Execute returned", rec.late)
	}
}

// TestBashSplitCharacterAcrossPause: a character written in two halves
// with a pause between them is reported whole.
func TestBashSplitCharacterAcrossPause(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	// The second half comes once the first report is in: the halves are
	// read apart, however loaded the machine.
	gt := newGate(t)
	rec := &recorder{}
	done := make(chan tools.Result, 1)
	go func() {
		done <- g.callWith(context.Background(), nil, "bash", map[string]any{"command": `printf 'ab\xc3'; ` + gt.wait() + `; printf '\xa9cd\n'`, "description": "d"}, rec)
	}()
	waitUntil(t, 30*time.Second, func() bool { return len(rec.all()) > 0 })
	gt.open(t)
	res := <-done
	if got := text(res); got != "abécd\n" {
		t.Errorf("result %q", got)
	}
	rs := rec.all()
	if len(rs) != 2 || rs[0].text != "ab" || rs[1].text != "écd\n" {
		t.Errorf("live reports %q", texts(rs))
	}
}

// TestBashTicksStreamLive: tick1 is reported while the command runs (it
// waits for a gate the test opens only then), tick2 after it.
func TestBashTicksStreamLive(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	gt := newGate(t)
	rec := &recorder{}
	done := make(chan tools.Result, 1)
	go func() {
		done <- g.callWith(context.Background(), nil, "bash", map[string]any{"command": "printf 'tick1\\n'; " + gt.wait() + "; printf 'tick2\\n'", "description": "d"}, rec)
	}()
	waitUntil(t, 30*time.Second, func() bool { return len(rec.all()) > 0 })
	select {
	case <-done:
		t.Fatal("the call ended before its gate was opened")
	default:
	}
	gt.open(t)
	res := <-done
	rs := rec.all()
	if len(rs) != 2 || rs[0].text != "tick1\n" || rs[1].text != "tick2\n" || text(res) != "tick1\ntick2\n" {
		t.Fatalf("reports %q, result %q", texts(rs), text(res))
	}
}

// TestBashCancel: a cancelled command returns at once with "command
// aborted"; the group got SIGTERM, and a group that ignores it dies by
// SIGKILL KillGrace later: not before (watched from the cancel on), and
// not long after.
func TestBashCancel(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	// The shell's pid as this process sees it (in a PID namespace $$ is
	// another number): found by a marker in its command line.
	marker := "cancel-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{}
	done := make(chan tools.Result, 1)
	go func() {
		done <- g.callWith(ctx, nil, "bash", map[string]any{"command": "trap '' TERM; echo started; sleep 60 & wait # " + marker, "description": "d"}, rec)
	}()
	var pid string
	waitUntil(t, 30*time.Second, func() bool {
		pids := commandPids("bash", marker)
		if len(pids) == 1 {
			pid = pids[0]
		}
		return pid != "" && rec.text() == "started\n"
	})
	start := time.Now()
	cancel()
	res := <-done
	// "At once": well before the SIGKILL; the proof that Execute did not
	// wait for the command is that the shell is still there after it.
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Execute returned %v after the cancel", took)
	}
	if !processExists(pid) {
		t.Fatal("the shell that ignores SIGTERM is already gone when Execute returns")
	}
	if text(res) != "Error: command aborted" {
		t.Errorf("result %q", text(res))
	}
	if rec.late != 0 || rec.text() != "started\n" {
		t.Errorf("live %q, %d late reports", rec.text(), rec.late)
	}
	for processExists(pid) {
		if time.Since(start) > KillGrace+20*time.Second {
			t.Fatalf("the shell is still there %v after the cancel", time.Since(start))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// It died before this check ended: not before KillGrace.
	if took := time.Since(start); took < KillGrace {
		t.Errorf("killed %v after the cancel, before the grace period (%v)", took, KillGrace)
	}
}

// processExists reports whether pid is a live (non-zombie) process.
func processExists(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestBashLeftoverHoldingPipes: a process left behind that keeps the
// output pipe open does not hold the result back.
func TestBashLeftoverHoldingPipes(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	start := time.Now()
	got := g.run(nil, "echo main; sleep 20 &")
	if got != "main\n" {
		t.Errorf("result %q", got)
	}
	// The leftover sleeps 20 s: a result that waited for it would take that.
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestBashTimeoutTrapped: a command that traps SIGTERM and exits 0 still
// says it timed out; one that ignores it is killed KillGrace later.
func TestBashTimeoutTrapped(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	res, _ := g.call(context.Background(), nil, "bash", map[string]any{"command": "trap 'echo bye; exit 0' TERM; echo hi; sleep 10 & wait", "description": "d", "timeoutMs": 200})
	if got := text(res); got != "hi\nbye\n[timed out after 200ms]" {
		t.Errorf("trapped: %q", got)
	}
	start := time.Now()
	res, rec := g.call(context.Background(), nil, "bash", map[string]any{"command": "trap '' TERM; echo hi; sleep 10", "description": "d", "timeoutMs": 100})
	if got := text(res); got != "hi\n[timed out after 100ms]\n[killed by signal: SIGKILL]" {
		t.Errorf("ignored: %q", got)
	}
	// SIGKILL comes KillGrace after the timeout's SIGTERM; the upper bound
	// (well below the command's 10 s) leaves room for a loaded machine.
	if took := time.Since(start); took < KillGrace || took > KillGrace+6*time.Second {
		t.Errorf("took %v", took)
	}
	if got := rec.text(); got != "hi\n[timed out after 100ms]\n" {
		t.Errorf("live view %q", got)
	}
}

// TestBashLiveCap: past three quarters of the live cap the view pauses;
// when the command ends one line says how many bytes it left out and
// names the spill files, and the last quarter of the output follows.
func TestBashLiveCap(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	g.m.liveCap = 100000
	// The streams are interleaved as they are read: the stderr part is
	// written only once all of stdout has been read (a gate), so that the
	// last quarter is stderr's, however the readers are scheduled.
	gt := newGate(t)
	rec := &recorder{}
	done := make(chan tools.Result, 1)
	go func() {
		done <- g.callWith(context.Background(), nil, "bash", map[string]any{"command": "head -c 300000 /dev/zero | tr '\\0' 'q'; " + gt.wait() + "; head -c 70000 /dev/zero | tr '\\0' 'e' >&2", "description": "d"}, rec)
	}()
	waitUntil(t, 30*time.Second, func() bool {
		g.m.mu.Lock()
		defer g.m.mu.Unlock()
		for p := range g.m.procs {
			return readTotal(p.out[0]) == 300000
		}
		return false
	})
	gt.open(t)
	res := <-done
	live := rec.text()
	if !strings.HasPrefix(live, strings.Repeat("q", 75000)+"\n[") {
		t.Fatalf("live view starts %q…", live[:min(len(live), 50)])
	}
	m := regexp.MustCompile(`^\n\[output truncated; 270000 bytes left out here \(a card shows at most 100000 bytes of output\); full output: (/\S+-stdout\.log), (/\S+-stderr\.log)\]\n`).FindStringSubmatch(live[75000:])
	if m == nil || live[75000+len(m[0]):] != strings.Repeat("e", 25000) {
		t.Fatalf("live view after the first part: %q…%q", live[75000:min(len(live), 75300)], live[max(0, len(live)-20):])
	}
	for i, want := range []int64{300000, 70000} {
		st, err := os.Stat(m[i+1])
		if err != nil || st.Size() != want {
			t.Errorf("spill file %s: %v %v", m[i+1], st, err)
		}
	}
	if st, err := os.Stat(filepath.Dir(m[1])); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("spill directory: %v %v", st, err)
	}
	if got := text(res); !strings.Contains(got, "\n[output truncated; full output: "+m[1]+"]\n[stderr]\n") {
		t.Errorf("result lacks the stdout truncation line: %q", got[max(0, len(got)-200):])
	}
}

// TestBashSpillLimit: with a spill limit of 1 MB, 4 MB of output (on
// stdout, and some on stderr) saves 1 MB in all: stdout's file holds its
// first bytes within the limit, then the line saying where it was cut and
// how much more came, and the result names the file as holding only the
// start; the tail the model sees is the output's end as without a limit.
func TestBashSpillLimit(t *testing.T) {
	t.Parallel()
	g := newRigWith(t, Options{SpillMax: 1 << 20})
	res, _ := g.call(context.Background(), nil, "bash", map[string]any{"command": "head -c 100000 /dev/zero | tr '\\0' e >&2; head -c 4000000 /dev/zero | tr '\\0' a; echo end", "description": "d"})
	got := text(res)
	m := regexp.MustCompile(`\n\[output truncated; its first (\d+) bytes \(the spill limit\): (/\S+-stdout\.log)\]`).FindStringSubmatch(got)
	if res.IsError || m == nil || !strings.Contains(got, "aaaaend\n") {
		t.Fatalf("result %v %q", m == nil, regexp.MustCompile(`\n\[output truncated[^\n]*`).FindAllString(got, -1))
	}
	data, err := os.ReadFile(m[2])
	if err != nil {
		t.Fatal(err)
	}
	saved, _ := strconv.Atoi(m[1])
	if saved != 1<<20-100000 {
		t.Errorf("stdout saved %d bytes, want the 1 MiB limit less stderr's 100000", saved)
	}
	want := strings.Repeat("a", saved) + cutLine(int64(saved), 4000004)
	if string(data) != want {
		t.Errorf("spill file: %d bytes ending %q, want %d ending %q", len(data), data[max(0, len(data)-200):], len(want), want[len(want)-200:])
	}
}
