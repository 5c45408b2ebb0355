package toolbash

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// startBg starts a background task in session s and returns its id.
func (g *rig) startBg(s tools.Session, command string) string {
	g.t.Helper()
	res, rec := g.call(context.Background(), s, "bash", map[string]any{"command": command, "description": "bg", "run_in_background": true})
	got := text(res)
	id, ok := strings.CutPrefix(got, "started background task ")
	if !ok || res.IsError {
		g.t.Fatalf("start: %q", got)
	}
	if len(rec.all()) != 0 {
		g.t.Errorf("a background task reported live output")
	}
	return id
}

func (g *rig) output(s tools.Session, id string) string {
	g.t.Helper()
	res, _ := g.call(context.Background(), s, "bash_output", map[string]any{"task_id": id})
	return text(res)
}

// TestBackgroundPolling: reads return only new output, then "(no new
// output)", and the final status (§10 bash #4); the owning session gets
// one notice.
func TestBackgroundPolling(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	s := tools.NewSession("s1", dir)
	id := g.startBg(s, "echo first; while [ ! -e gate ]; do sleep 0.02; done; echo second; echo oops >&2")
	if id != "bash-1" {
		t.Errorf("id %q, want bash-1", id)
	}
	waitUntil(t, 30*time.Second, func() bool { return g.m.tasks[id].p.out[0].spillPath() == "" && readTotal(g.m.tasks[id].p.out[0]) > 0 })
	if got := g.output(s, id); got != "first\n\n[status: running]" {
		t.Errorf("read 1: %q", got)
	}
	if got := g.output(s, id); got != "(no new output)\n[status: running]" {
		t.Errorf("read 2: %q", got)
	}
	if len(tools.TakeNotices(s)) != 0 {
		t.Error("notice while running")
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, func() bool { return g.m.tasks[id].p.finished() })
	if got := g.output(s, id); got != "second\n[stderr]\noops\n\n[status: completed, exit code: 0]" {
		t.Errorf("read 3: %q", got)
	}
	if got := g.output(s, id); got != "(no new output)\n[status: completed, exit code: 0]" {
		t.Errorf("read 4: %q", got)
	}
	var notices []string
	waitUntil(t, 30*time.Second, func() bool { notices = append(notices, tools.TakeNotices(s)...); return len(notices) > 0 })
	want := "background bash task bash-1 finished [status: completed, exit code: 0]. Read its output with bash_output."
	if len(notices) != 1 || notices[0] != want {
		t.Errorf("notices %q, want [%q]", notices, want)
	}
}

func readTotal(s *stream) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// TestBackgroundKillTwice (§10 bash #6) and the status after a kill.
func TestBackgroundKillTwice(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	s := tools.NewSession("s1", t.TempDir())
	id := g.startBg(s, "sleep 30")
	kill := func() string {
		res, _ := g.call(context.Background(), s, "bash_kill", map[string]any{"task_id": id})
		return text(res)
	}
	if got := kill(); got != "killed background task "+id {
		t.Errorf("kill 1: %q", got)
	}
	if got := kill(); got != "task "+id+" had already finished" {
		t.Errorf("kill 2: %q", got)
	}
	if got := g.output(s, id); got != "(no new output)\n[status: killed by SIGTERM]" {
		t.Errorf("output: %q", got)
	}
	time.Sleep(50 * time.Millisecond)
	if n := tools.TakeNotices(s); len(n) != 0 {
		t.Errorf("notices after bash_kill: %q", n)
	}
	done := g.startBg(s, "true")
	waitUntil(t, 30*time.Second, func() bool { return g.m.tasks[done].p.finished() })
	res, _ := g.call(context.Background(), s, "bash_kill", map[string]any{"task_id": done})
	if text(res) != "task "+done+" had already finished" {
		t.Errorf("kill of a finished task: %q", text(res))
	}
}

// TestBackgroundKillLeftover: a task whose shell exited but left a
// process in its group (`server &`): bash_output and the notice say so,
// bash_kill kills the group and says so, then nothing is left to kill.
func TestBackgroundKillLeftover(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	s := tools.NewSession("s1", t.TempDir())
	id := g.startBg(s, "sleep 30 & echo started")
	task := g.m.tasks[id]
	waitUntil(t, 30*time.Second, task.p.finished)
	if len(groupMembers(task.p.pgid)) == 0 {
		t.Fatal("the task left no process behind")
	}
	if got, want := g.output(s, id), "started\n\n"+leftoverLine+"\n[status: completed, exit code: 0]"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	var notices []string
	waitUntil(t, 30*time.Second, func() bool { notices = append(notices, tools.TakeNotices(s)...); return len(notices) > 0 })
	want := "background bash task " + id + " finished [status: completed, exit code: 0] " + leftoverLine + ". Read its output with bash_output."
	if len(notices) != 1 || notices[0] != want {
		t.Errorf("notices %q, want [%q]", notices, want)
	}
	kill := func() string {
		res, _ := g.call(context.Background(), s, "bash_kill", map[string]any{"task_id": id})
		return text(res)
	}
	start := time.Now()
	res := kill()
	if took := time.Since(start); took > KillGrace/2 {
		t.Errorf("bash_kill took %v for a leftover that dies of SIGTERM", took)
	}
	if m := groupMembers(task.p.pgid); len(m) > 0 {
		t.Fatalf("bash_kill said %q; process group %d still has %v", res, task.p.pgid, m)
	}
	if want := "task " + id + " had already finished; killed the processes it left running"; res != want {
		t.Errorf("bash_kill said %q, want %q", res, want)
	}
	if got := g.output(s, id); got != "(no new output)\n[status: completed, exit code: 0]" {
		t.Errorf("output after the kill: %q", got)
	}
	if got := kill(); got != "task "+id+" had already finished" {
		t.Errorf("second bash_kill: %q", got)
	}
}

// TestBackgroundOwnership: another session may not read or kill a task
// (§10 bash #7); unknown ids are named; an unowned task is open.
func TestBackgroundOwnership(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	a, b := tools.NewSession("a", t.TempDir()), tools.NewSession("b", t.TempDir())
	id := g.startBg(a, "sleep 30")
	for _, name := range []string{"bash_output", "bash_kill"} {
		res, _ := g.call(context.Background(), b, name, map[string]any{"task_id": id})
		if text(res) != "Error: task "+id+" belongs to another session" || !res.IsError {
			t.Errorf("%s from b: %q", name, text(res))
		}
	}
	res, _ := g.call(context.Background(), a, "bash_output", map[string]any{"task_id": "bash-99"})
	if text(res) != `Error: unknown bash task "bash-99"` {
		t.Errorf("unknown: %q", text(res))
	}
	open := g.startBg(nil, "echo anyone")
	waitUntil(t, 30*time.Second, func() bool { return g.m.tasks[open].p.finished() })
	if got := g.output(b, open); got != "anyone\n\n[status: completed, exit code: 0]" {
		t.Errorf("unowned task from b: %q", got)
	}
}

// TestKillSession: closing a session stops its tasks without a notice;
// other sessions' tasks go on.
func TestKillSession(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	a, b := tools.NewSession("a", t.TempDir()), tools.NewSession("b", t.TempDir())
	ida := g.startBg(a, "sleep 30")
	idb := g.startBg(b, "sleep 30")
	pa, pb := g.m.tasks[ida].p, g.m.tasks[idb].p
	g.m.KillSession("a")
	waitUntil(t, 30*time.Second, pa.finished)
	if pb.finished() {
		t.Error("b's task died too")
	}
	res, _ := g.call(context.Background(), a, "bash_output", map[string]any{"task_id": ida})
	if !strings.Contains(text(res), "unknown bash task") {
		t.Errorf("a's task still known: %q", text(res))
	}
	time.Sleep(50 * time.Millisecond)
	if n := tools.TakeNotices(a); len(n) != 0 {
		t.Errorf("notices for a closed session: %q", n)
	}
}

// TestBackgroundKillLeftoverIgnoringTERM: a leftover that ignores SIGTERM
// gets SIGKILL KillGrace later, and bash_kill waits for it.
func TestBackgroundKillLeftoverIgnoringTERM(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	s := tools.NewSession("s1", t.TempDir())
	id := g.startBg(s, "trap '' TERM; sleep 30 & echo started")
	p := g.m.tasks[id].p
	waitUntil(t, 30*time.Second, p.finished)
	start := time.Now()
	res, _ := g.call(context.Background(), s, "bash_kill", map[string]any{"task_id": id})
	took := time.Since(start)
	if want := "task " + id + " had already finished; killed the processes it left running"; text(res) != want {
		t.Errorf("bash_kill said %q, want %q", text(res), want)
	}
	// It waits for the SIGKILL (KillGrace) and no more than its own bound
	// (KillGrace plus a second) plus room for a loaded machine.
	if took < KillGrace-100*time.Millisecond || took > KillGrace+5*time.Second {
		t.Errorf("bash_kill took %v, want about KillGrace (%v)", took, KillGrace)
	}
	if m := groupMembers(p.pgid); len(m) > 0 {
		t.Errorf("process group %d still has %v", p.pgid, m)
	}
}

// TestKillSessionLeftover: closing a session also stops what its
// finished tasks left running.
func TestKillSessionLeftover(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	s := tools.NewSession("s1", t.TempDir())
	p := g.m.tasks[g.startBg(s, "sleep 30 & echo started")].p
	waitUntil(t, 30*time.Second, p.finished)
	if len(groupMembers(p.pgid)) == 0 {
		t.Fatal("the task left no process behind")
	}
	g.m.KillSession("s1")
	waitUntil(t, 30*time.Second, func() bool { return len(groupMembers(p.pgid)) == 0 })
}

// TestShutdownKillsEverything: Shutdown stops foreground leftovers and
// tasks, including one that ignores SIGTERM, within about ShutdownGrace;
// later commands fail.
func TestShutdownKillsEverything(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	s := tools.NewSession("s1", t.TempDir())
	g.startBg(s, "sleep 30")
	g.startBg(s, "trap '' TERM; sleep 30 & wait")
	g.run(s, "sleep 30 >/dev/null 2>&1 &")
	var ps []*proc
	g.m.mu.Lock()
	for p := range g.m.procs {
		ps = append(ps, p)
	}
	g.m.mu.Unlock()
	if len(ps) != 3 {
		t.Fatalf("%d process groups tracked, want 3", len(ps))
	}
	start := time.Now()
	g.m.Shutdown()
	took := time.Since(start)
	// About ShutdownGrace (plus pipeGrace at most), with room for a loaded
	// machine: far below the 30 s the commands would run.
	if took > ShutdownGrace+5*time.Second {
		t.Errorf("Shutdown took %v", took)
	}
	for _, p := range ps {
		waitUntil(t, 30*time.Second, func() bool { return len(groupMembers(p.pgid)) == 0 })
	}
	res, _ := g.call(context.Background(), s, "bash", map[string]any{"command": "true", "description": "d"})
	if text(res) != "Error: the agent is shutting down" {
		t.Errorf("after shutdown: %q", text(res))
	}
	if n := tools.TakeNotices(s); len(n) != 0 {
		t.Errorf("notices at shutdown: %q", n)
	}
}

// TestBackgroundSpillAndDropped: a task that prints more than TailBytes
// between two reads reports the loss and names its spill file.
func TestBackgroundSpillAndDropped(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	s := tools.NewSession("s1", t.TempDir())
	id := g.startBg(s, "head -c 200000 /dev/zero | tr '\\0' 'z'; echo")
	waitUntil(t, 30*time.Second, func() bool { return g.m.tasks[id].p.finished() })
	got := g.output(s, id)
	if !strings.Contains(got, "\n[some output was dropped from memory; full output: /") || !strings.HasSuffix(got, "-stdout.log]\n[status: completed, exit code: 0]") {
		t.Errorf("output ends %q", got[max(0, len(got)-200):])
	}
	if n := strings.Count(got, "z"); n != TailBytes-1 {
		t.Errorf("%d bytes of output shown, want %d", n, TailBytes-1)
	}
}
