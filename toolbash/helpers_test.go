package toolbash

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// rig is a Manager with its tools registered, stopped at the test's end.
type rig struct {
	t   *testing.T
	m   *Manager
	reg *tools.Registry
}

func newRig(t *testing.T) *rig {
	t.Helper()
	return newRigWith(t, Options{})
}

// newRigWith is newRig with options (TempDir defaults to a fresh one).
func newRigWith(t *testing.T, o Options) *rig {
	t.Helper()
	if o.TempDir == "" {
		o.TempDir = t.TempDir()
	}
	m := New(o)
	t.Cleanup(m.Shutdown)
	reg := tools.NewRegistry()
	for _, tl := range m.Tools() {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return &rig{t: t, m: m, reg: reg}
}

// report is one live report and when it was made: output (text) or a
// note.
type report struct {
	at   time.Time
	text string
	note string
}

// terminalText is what a live terminal shows of reports: the output as it
// came, each note on a line of its own.
func terminalText(rs []report) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.text)
		if r.note != "" {
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
				b.WriteByte('\n')
			}
			b.WriteString(r.note + "\n")
		}
	}
	return b.String()
}

// recorder collects the live reports of one call and flags reports made
// after Execute returned.
type recorder struct {
	mu      sync.Mutex
	reports []report
	closed  bool
	late    int
}

func (r *recorder) progress(p tools.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.late++
	}
	r.reports = append(r.reports, report{time.Now(), p.Output, p.Note})
}

func (r *recorder) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}

func (r *recorder) all() []report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]report(nil), r.reports...)
}

func (r *recorder) text() string { return terminalText(r.all()) }

// call runs tool name with args (a Go value marshalled to JSON) in session
// s (nil for none) and returns the result and the live reports.
func (g *rig) call(ctx context.Context, s tools.Session, name string, args any) (tools.Result, *recorder) {
	g.t.Helper()
	rec := &recorder{}
	return g.callWith(ctx, s, name, args, rec), rec
}

// callWith is call with the recorder given, so that a test can watch the
// live reports while the call runs.
func (g *rig) callWith(ctx context.Context, s tools.Session, name string, args any, rec *recorder) tools.Result {
	raw, err := json.Marshal(args)
	if err != nil {
		g.t.Error(err)
		return tools.Result{}
	}
	res := g.reg.Execute(ctx, &tools.Exec{CallID: "c1", Name: name, Args: raw, Session: s, Progress: rec.progress})
	rec.close()
	return res
}

// gate is a file a command can wait for (`until [ -e GATE ]`), and open
// makes it.
type gate string

func newGate(t *testing.T) gate { return gate(filepath.Join(t.TempDir(), "gate")) }

// wait is the shell loop that waits for the gate.
func (g gate) wait() string { return `until [ -e '` + string(g) + `' ]; do sleep 0.01; done` }

func (g gate) open(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(string(g), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs a foreground bash command in session s and returns the result
// text.
func (g *rig) run(s tools.Session, command string) string {
	g.t.Helper()
	res, _ := g.call(context.Background(), s, "bash", map[string]any{"command": command, "description": "test"})
	if res.IsError {
		g.t.Fatalf("%q: error result %q", command, tools.JoinText(res.Content))
	}
	return tools.JoinText(res.Content)
}

func text(r tools.Result) string { return tools.JoinText(r.Content) }

// waitUntil polls cond for up to d.
func waitUntil(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func texts(rs []report) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.text
	}
	return out
}

// groupMembers lists the live (non-zombie) processes of process group
// pgid, from /proc.
func groupMembers(pgid int) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, d.Name())
		}
	}
	return out
}

// commandPids lists the live processes, by their pid in this process's
// PID namespace, whose argv[0] is name and whose command line contains
// marker.
func commandPids(name, marker string) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(b), marker) {
			continue
		}
		argv0, _, _ := strings.Cut(string(b), "\x00")
		if argv0 == name && processExists(d.Name()) {
			out = append(out, d.Name())
		}
	}
	return out
}
