package main

// The benchmarks run through the built binary: start-up
// against a stdlib-only floor agent (testdata/floor) and any peer agents
// found, `session/list` over 1,000 logged sessions, and whole prompt turns
// of a shell command against the bare command. Each benchmark interleaves
// the things it compares within one loop, so they see the same machine
// state, and reports medians over its iterations (the machine is shared:
// a median is steadier than a mean) as custom metrics; ns/op is the whole
// iteration and means little. scripts/bench.sh runs them all and prints
// the table.
//
// Environment: DSH_BENCH_BIN is the dsh-acp binary to measure (default:
// built from this package with CGO_ENABLED=0, as released); DSH_BENCH_FLOOR
// the floor agent (default: built from testdata/floor); DSH_BENCH_PEERS a
// folder holding peer agents (codex-acp, claude-agent-acp; looked for in
// it, its bin/ and its node_modules/.bin/), measured for start-up only;
// DSH_BENCH_AGENTS more agents for the start-up benchmark, as
// "name=path" words.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// benchDirs are removed by TestMain.
var (
	benchDirsMu sync.Mutex
	benchDirs   []string
)

func benchTempDir(b testing.TB, pattern string) string {
	b.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		b.Fatal(err)
	}
	benchDirsMu.Lock()
	benchDirs = append(benchDirs, dir)
	benchDirsMu.Unlock()
	return dir
}

var (
	floorOnce sync.Once
	floorPath string
	floorErr  error
)

// floorBinary is the stdlib-only agent: $DSH_BENCH_FLOOR, else built from
// testdata/floor once per run.
func floorBinary(b testing.TB) string {
	b.Helper()
	if p := os.Getenv("DSH_BENCH_FLOOR"); p != "" {
		return p
	}
	floorOnce.Do(func() {
		floorPath = filepath.Join(benchTempDir(b, "dsh-acp-floor-"), "floor")
		cmd := exec.Command("go", "build", "-o", floorPath, "./testdata/floor")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			floorErr = fmt.Errorf("go build floor: %v\n%s", err, out)
		}
	})
	if floorErr != nil {
		b.Fatal(floorErr)
	}
	return floorPath
}

// benchBinary is the dsh-acp under test: $DSH_BENCH_BIN, else the
// process tests' build.
func benchBinary(b testing.TB) string {
	if p := os.Getenv("DSH_BENCH_BIN"); p != "" {
		return p
	}
	return binary(b)
}

// agentBin is one agent program a start-up benchmark spawns.
type agentBin struct {
	name string
	path string
	env  []string
	// peer marks another project's agent: only its initialize is timed
	// (its session/new may need a login).
	peer bool
}

// peerAgents are the peers found under $DSH_BENCH_PEERS, then the
// agents $DSH_BENCH_AGENTS names ("name=path name=path": other builds to
// compare, such as the binary of another commit).
func peerAgents() []agentBin {
	var out []agentBin
	if dir := os.Getenv("DSH_BENCH_PEERS"); dir != "" {
		for _, name := range []string{"codex-acp", "claude-agent-acp"} {
			for _, sub := range []string{"", "bin", filepath.Join("node_modules", ".bin")} {
				p := filepath.Join(dir, sub, name)
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
					out = append(out, agentBin{name: name, path: p, peer: true})
					break
				}
			}
		}
	}
	for _, f := range strings.Fields(os.Getenv("DSH_BENCH_AGENTS")) {
		if name, path, ok := strings.Cut(f, "="); ok {
			out = append(out, agentBin{name: name, path: path})
		}
	}
	return out
}

// startRun is one spawn of an agent: spawn -> `initialize` response,
// spawn -> `session/new` response (with newSession), the RSS then (and
// its peak so far, MiB), and stdin EOF -> exit.
type startRun struct {
	init, new, exit time.Duration
	rss, hwm        float64
}

// startOnce spawns a, sends initialize, reads the response, samples the
// RSS, closes stdin and waits for the exit. With newSession, a
// `session/new` is answered before stdin ends (not for peers: the exit
// is then measured with a session open).
func startOnce(b *testing.B, a agentBin, stateDir string, newSession bool) startRun {
	b.Helper()
	cmd := exec.Command(a.path)
	cmd.Env = append(os.Environ(), "DSH_STATE_DIR="+stateDir, "DSH_API_KEY=", "DEEPSEEK_API_KEY=")
	cmd.Env = append(cmd.Env, a.env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	if _, err := io.WriteString(stdin, initLine+"\n"); err != nil {
		b.Fatalf("%s: %v", a.name, err)
	}
	line, err := r.ReadBytes('\n')
	init := time.Since(t0)
	if err != nil || !bytes.Contains(line, []byte(`"result"`)) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		b.Fatalf("%s: initialize answered %q, %v; stderr:\n%s", a.name, line, err, stderr.Bytes())
	}
	if newSession {
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`+"\n")
		if l, err := r.ReadBytes('\n'); err != nil || !bytes.Contains(l, []byte(`"sessionId"`)) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			b.Fatalf("%s: session/new answered %q, %v; stderr:\n%s", a.name, l, err, stderr.Bytes())
		}
	}
	run := startRun{init: init}
	if newSession {
		run.new = time.Since(t0)
	}
	run.rss, run.hwm = procMemory(cmd.Process.Pid)
	go io.Copy(io.Discard, r)
	t1 := time.Now()
	stdin.Close()
	_ = cmd.Wait()
	run.exit = time.Since(t1)
	return run
}

// procMemory reads VmRSS and VmHWM of pid, in MiB.
func procMemory(pid int) (rss, hwm float64) {
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(status), "\n") {
		var kb float64
		if _, err := fmt.Sscanf(l, "VmRSS: %f kB", &kb); err == nil {
			rss = kb / 1024
		}
		if _, err := fmt.Sscanf(l, "VmHWM: %f kB", &kb); err == nil {
			hwm = kb / 1024
		}
	}
	return rss, hwm
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkStartup spawns dsh-acp, the floor agent and the peers in turn
// (the order rotating each iteration) and reports, as medians: spawn ->
// `initialize` response (init-ms, floor-init-ms, their ratio init-x-floor;
// target ≤ 2.5), the RSS after it (RSS-MiB; target ≤ 11) and its peak,
// stdin EOF -> exit when idle (exit-ms; target ≤ 5), a second spawn of
// each agent but the peers answering a `session/new` too: spawn -> that
// answer (new-ms, floor-new-ms, new-x-floor; target ≤ 3) and the exit
// with the session open (exit-new-ms), and each other agent's figures
// (NAME-init-ms, NAME-new-ms, ...).
func BenchmarkStartup(b *testing.B) {
	agents := append([]agentBin{{name: "dsh-acp", path: benchBinary(b)}, {name: "floor", path: floorBinary(b)}}, peerAgents()...)
	state := benchTempDir(b, "dsh-acp-bench-state-")
	runs, news := map[string][]startRun{}, map[string][]startRun{}
	for i := 0; i < b.N; i++ {
		for k := range agents {
			a := agents[(i+k)%len(agents)]
			runs[a.name] = append(runs[a.name], startOnce(b, a, state, false))
		}
		for k := range agents {
			if a := agents[(i+k)%len(agents)]; !a.peer {
				news[a.name] = append(news[a.name], startOnce(b, a, state, true))
			}
		}
	}
	pick := func(from map[string][]startRun, name string, f func(startRun) float64) float64 {
		var xs []float64
		for _, r := range from[name] {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	initMs := func(r startRun) float64 { return ms(r.init) }
	newMs := func(r startRun) float64 { return ms(r.new) }
	rss := func(r startRun) float64 { return r.rss }
	exitMs := func(r startRun) float64 { return ms(r.exit) }
	dsh, floor := pick(runs, "dsh-acp", initMs), pick(runs, "floor", initMs)
	b.ReportMetric(dsh, "init-ms")
	b.ReportMetric(floor, "floor-init-ms")
	b.ReportMetric(dsh/floor, "init-x-floor")
	dshNew, floorNew := pick(news, "dsh-acp", newMs), pick(news, "floor", newMs)
	b.ReportMetric(dshNew, "new-ms")
	b.ReportMetric(floorNew, "floor-new-ms")
	b.ReportMetric(dshNew/floorNew, "new-x-floor")
	b.ReportMetric(pick(runs, "dsh-acp", rss), "RSS-MiB")
	b.ReportMetric(pick(runs, "dsh-acp", func(r startRun) float64 { return r.hwm }), "peak-RSS-MiB")
	b.ReportMetric(pick(runs, "floor", rss), "floor-RSS-MiB")
	b.ReportMetric(pick(runs, "dsh-acp", exitMs), "exit-ms")
	b.ReportMetric(pick(runs, "floor", exitMs), "floor-exit-ms")
	b.ReportMetric(pick(news, "dsh-acp", exitMs), "exit-new-ms")
	for _, a := range agents[2:] {
		b.ReportMetric(pick(runs, a.name, initMs), a.name+"-init-ms")
		b.ReportMetric(pick(runs, a.name, rss), a.name+"-RSS-MiB")
		b.ReportMetric(pick(runs, a.name, exitMs), a.name+"-exit-ms")
		if !a.peer {
			b.ReportMetric(pick(news, a.name, newMs), a.name+"-new-ms")
			b.ReportMetric(pick(news, a.name, exitMs), a.name+"-exit-new-ms")
		}
	}
}

// idleProcesses starts n processes that sleep until b ends (the
// machine's other programs, for the exit benchmark).
func idleProcesses(b *testing.B, n int) {
	b.Helper()
	for range n {
		c := exec.Command("sleep", "3600")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	}
}

// BenchmarkExitBusy is BenchmarkStartup's exit figures with 1,000 more
// idle processes on the machine: stdin EOF -> exit of an idle agent
// (exit-ms, floor-exit-ms, NAME-exit-ms) and of one with a session open
// (exit-new-ms, NAME-exit-new-ms); target ≤ 5 ms whatever the machine
// runs.
func BenchmarkExitBusy(b *testing.B) {
	agents := append([]agentBin{{name: "dsh-acp", path: benchBinary(b)}, {name: "floor", path: floorBinary(b)}}, peerAgents()...)
	idleProcesses(b, 1000)
	state := benchTempDir(b, "dsh-acp-bench-state-")
	idle, open := map[string][]float64{}, map[string][]float64{}
	for i := 0; i < b.N; i++ {
		for k := range agents {
			a := agents[(i+k)%len(agents)]
			idle[a.name] = append(idle[a.name], ms(startOnce(b, a, state, false).exit))
			if !a.peer {
				open[a.name] = append(open[a.name], ms(startOnce(b, a, state, true).exit))
			}
		}
	}
	b.ReportMetric(median(idle["dsh-acp"]), "exit-ms")
	b.ReportMetric(median(open["dsh-acp"]), "exit-new-ms")
	b.ReportMetric(median(idle["floor"]), "floor-exit-ms")
	for _, a := range agents[2:] {
		b.ReportMetric(median(idle[a.name]), a.name+"-exit-ms")
		if !a.peer {
			b.ReportMetric(median(open[a.name]), a.name+"-exit-new-ms")
		}
	}
}

var (
	listStateMu sync.Mutex
	listStates  = map[int]string{}
)

// listStateDir is a state directory of n logged sessions in ten working
// directories, each log a realistic session of the given number of turns
// of three tool calls each (about 15 KB a turn) with its title, their
// modification times one minute apart. Built once per run and size.
func listStateDir(b *testing.B, n, turns int) string {
	listStateMu.Lock()
	defer listStateMu.Unlock()
	if root, ok := listStates[n]; ok {
		return root
	}
	root := benchTempDir(b, "dsh-acp-bench-list-")
	result := strings.Repeat("     1\tpackage main // a line of a file the model read\n", 40)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("sess_%05d", i)
		cwd := fmt.Sprintf("/work/project%d", i%10)
		path := session.LogPath(root, cwd, id)
		l := session.NewLog(path, session.NewHeader(id, cwd, base.UnixMilli()))
		seq := int64(0)
		add := func(d session.Data) {
			if err := l.Append(session.Event{Seq: seq, Time: base.UnixMilli() + seq, Data: d}); err != nil {
				b.Fatal(err)
			}
			seq++
		}
		for turn := 1; turn <= turns; turn++ {
			add(session.TurnStart{Turn: turn})
			if turn == 1 {
				add(session.Title{Title: fmt.Sprintf("Fix the failing test %d", i)})
			}
			add(session.UserMessage{Turn: turn, Content: []tools.Content{tools.Text("Please fix it.")}})
			for step := 1; step <= 3; step++ {
				call := fmt.Sprintf("call_%d_%d", turn, step)
				args := fmt.Sprintf(`{"path":"src/file%d.go"}`, step)
				add(session.AssistantMessage{Turn: turn, Step: step, Text: "Let me read the file.", Reasoning: strings.Repeat("thinking ", 30),
					ToolCalls: []session.ToolCallRef{{CallID: call, Name: "read", Arguments: args}}, FinishReason: "tool_calls"})
				add(session.ToolCall{Turn: turn, Step: step, CallID: call, Name: "read", Arguments: args})
				add(session.ToolResult{Turn: turn, Step: step, CallID: call, Content: []tools.Content{tools.Text(result)}})
			}
			add(session.TurnEnd{Turn: turn, Reason: session.EndTurn})
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		at := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(path, at, at); err != nil {
			b.Fatal(err)
		}
	}
	listStates[n] = root
	return root
}

// listWalk starts agent a on the state directory root, pages through
// `session/list` (50 a page) to the end and returns the time of the first
// page, those of the later ones and of the whole walk (ms).
func listWalk(b *testing.B, a agentBin, root string, want int) (first float64, later []float64, all float64) {
	b.Helper()
	cmd := exec.Command(a.path)
	cmd.Env = append(os.Environ(), "DSH_STATE_DIR="+root, "DSH_API_KEY=", "DEEPSEEK_API_KEY=")
	p := startCmd(b, cmd)
	p.send(b, initLine)
	p.next(b)
	cursor, seen := "", 0
	t0 := time.Now()
	for page := 0; ; page++ {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + string(jsonQuote(cursor)) + `}`
		}
		tp := time.Now()
		p.send(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/list","params":%s}`, 10+page, params))
		var resp struct {
			Result struct {
				Sessions   []json.RawMessage `json:"sessions"`
				NextCursor string            `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(p.next(b), &resp); err != nil {
			b.Fatal(err)
		}
		if page == 0 {
			first = ms(time.Since(tp))
		} else {
			later = append(later, ms(time.Since(tp)))
		}
		seen += len(resp.Result.Sessions)
		if cursor = resp.Result.NextCursor; cursor == "" {
			break
		}
	}
	all = ms(time.Since(t0))
	if seen != want {
		b.Fatalf("%s listed %d sessions, want %d", a.name, seen, want)
	}
	p.stdin.Close()
	p.wait(b)
	return first, later, all
}

// benchList pages through n sessions with dsh-acp and the other builds
// (DSH_BENCH_AGENTS), in turn, each run twice: once after removing the
// list index file (cold-first-page-ms: the index is rebuilt), once with
// the index the previous run left (first-page-ms, later-page-ms: the
// median page after the first, all-pages-ms); medians, NAME-... for the
// other builds.
func benchList(b *testing.B, n, turns int) {
	root := listStateDir(b, n, turns)
	agents := benchAgents(b)
	type figs struct{ cold, first, later, all []float64 }
	res := map[string]*figs{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range agents {
			a := agents[(i+k)%len(agents)]
			f := res[a.name]
			if f == nil {
				f = &figs{}
				res[a.name] = f
			}
			_ = os.Remove(filepath.Join(root, session.IndexFile))
			cold, _, _ := listWalk(b, a, root, n)
			first, later, all := listWalk(b, a, root, n)
			f.cold, f.first, f.all = append(f.cold, cold), append(f.first, first), append(f.all, all)
			f.later = append(f.later, median(later))
		}
	}
	for _, a := range agents {
		prefix := ""
		if a.name != "dsh-acp" {
			prefix = a.name + "-"
		}
		f := res[a.name]
		b.ReportMetric(median(f.cold), prefix+"cold-first-page-ms")
		b.ReportMetric(median(f.first), prefix+"first-page-ms")
		b.ReportMetric(median(f.later), prefix+"later-page-ms")
		b.ReportMetric(median(f.all), prefix+"all-pages-ms")
	}
}

// BenchmarkListSessions1000 pages through 1,000 logged sessions of two
// turns (about 30 KB each): see benchList.
func BenchmarkListSessions1000(b *testing.B) { benchList(b, 1000, 2) }

// BenchmarkListSessions10000 pages through 10,000 logged sessions of one
// turn (about 15 KB each): see benchList; targets: first page ≤ 50 ms,
// later pages ≤ 10 ms, the walk ≤ 1 s.
func BenchmarkListSessions10000(b *testing.B) { benchList(b, 10000, 1) }

// startProcEnv is startProc with extra environment (later entries win)
// and the binary under test.
func startProcEnv(b testing.TB, env []string, args ...string) *proc {
	b.Helper()
	cmd := exec.Command(benchBinary(b), args...)
	cmd.Env = append(os.Environ(), "DSH_STATE_DIR="+b.TempDir(), "DSH_API_KEY=", "DEEPSEEK_API_KEY=")
	cmd.Env = append(cmd.Env, env...)
	return startCmd(b, cmd)
}

// bareRun runs command with bash as the agent would, its output drained
// from a pipe, and returns its wall time.
func bareRun(b *testing.B, command string) time.Duration {
	cmd := exec.Command("bash", "-c", command)
	out, _ := cmd.StdoutPipe()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("bare %q: %v", command, err)
	}
	return time.Since(t0)
}

// turnRun starts the binary on a recorded turn whose model runs command
// with bash, and returns the wall time of the whole `session/prompt`
// (request sent -> its response read, every update on the way read too)
// and the agent's peak RSS (MiB). terminal says whether the client
// advertises `_meta.terminal_output` (Zed does).
func turnRun(b *testing.B, command string, terminal bool, state string) (time.Duration, float64) {
	b.Helper()
	rec := e2etest.Replay(b, e2etest.ToolCalls(bashCall(map[string]any{"command": command, "description": "Run it"})), e2etest.Text(nil, []string{"Done."}, "stop"))
	var env []string
	if state != "" {
		env = []string{"DSH_STATE_DIR=" + state}
	}
	p := startProcEnv(b, env, "--replay", rec, "--mode", "bypassPermissions")
	caps := `{}`
	if terminal {
		caps = `{"_meta":{"terminal_output":true}}`
	}
	p.send(b, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":`+caps+`}}`)
	p.next(b)
	sid, _ := p.newSession(b, 2, b.TempDir(), `[]`)
	t0 := time.Now()
	p.send(b, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"go"}]}}`)
	for {
		l := p.next(b)
		if bytes.Contains(l, []byte(`"id":3`)) && bytes.Contains(l, []byte(`"stopReason"`)) {
			break
		}
	}
	took := time.Since(t0)
	_, hwm := procMemory(p.cmd.Process.Pid)
	p.stdin.Close()
	p.wait(b)
	return took, hwm
}

// BenchmarkBashTurn runs whole prompt turns through the binary whose
// command prints 100 MB, 1 GB, or two pieces 5 ms apart, interleaved with
// the bare command, for a client with live terminals and one without, and
// reports as medians the turn (turn-ms), the bare command (bare-ms), the
// difference and ratio, and the agent's peak RSS. Each turn is a fresh
// process; its state folder is fresh (the sandbox probe runs at the
// command) except in two-piece-warm, whose processes share one folder
// warmed by an untimed turn (the probe read from its cache, as for every
// command after the first since boot). Targets: 100 MB ≤ 2× bare, 1 GB ≤ 1.3× bare, two pieces ≤ bare + 5 ms,
// peak RSS ≤ 50 MiB.
func BenchmarkBashTurn(b *testing.B) {
	cases := []struct {
		name, command string
		warm          bool
	}{
		{"100MB", "yes 'a line of output, 0123456789 abcdefghijklmnopqrstuvwxyz' | head -c 100000000", false},
		{"1GB", "yes 'a line of output, 0123456789 abcdefghijklmnopqrstuvwxyz' | head -c 1000000000", false},
		{"two-piece", "echo a; sleep 0.005; echo b", false},
		{"two-piece-warm", "echo a; sleep 0.005; echo b", true},
	}
	for _, c := range cases {
		for _, terminal := range []bool{true, false} {
			name := c.name + "/plain"
			if terminal {
				name = c.name + "/terminal"
			}
			b.Run(name, func(b *testing.B) {
				var turn, bare, rss []float64
				state := ""
				if c.warm {
					state = b.TempDir()
					turnRun(b, c.command, terminal, state)
				}
				for i := 0; i < b.N; i++ {
					if i%2 == 1 {
						bare = append(bare, ms(bareRun(b, c.command)))
					}
					d, hwm := turnRun(b, c.command, terminal, state)
					turn = append(turn, ms(d))
					rss = append(rss, hwm)
					if i%2 == 0 {
						bare = append(bare, ms(bareRun(b, c.command)))
					}
				}
				t, bb := median(turn), median(bare)
				b.ReportMetric(t, "turn-ms")
				b.ReportMetric(bb, "bare-ms")
				b.ReportMetric(t-bb, "extra-ms")
				b.ReportMetric(t/bb, "turn-x-bare")
				b.ReportMetric(median(rss), "peak-RSS-MiB")
			})
		}
	}
}

// historyStateDir is a state directory holding one session of calls tool
// calls (three a turn, each result about 2 KB), built once per run.
func historyStateDir(b *testing.B, calls int) (root, id, cwd string) {
	listStateMu.Lock()
	defer listStateMu.Unlock()
	id, cwd = "sess_history", "/work/history"
	if root, ok := listStates[-calls]; ok {
		return root, id, cwd
	}
	root = benchTempDir(b, "dsh-acp-bench-history-")
	result := strings.Repeat("     1\tpackage main // a line of a file the model read\n", 40)
	l := session.NewLog(session.LogPath(root, cwd, id), session.NewHeader(id, cwd, 1))
	seq := int64(0)
	add := func(d session.Data) {
		if err := l.Append(session.Event{Seq: seq, Time: 1 + seq, Data: d}); err != nil {
			b.Fatal(err)
		}
		seq++
	}
	for turn := 1; (turn-1)*3 < calls; turn++ {
		add(session.TurnStart{Turn: turn})
		add(session.UserMessage{Turn: turn, Content: []tools.Content{tools.Text("Please go on.")}})
		for step := 1; step <= 3; step++ {
			call := fmt.Sprintf("call_%d_%d", turn, step)
			args := fmt.Sprintf(`{"path":"src/file%d.go"}`, step)
			add(session.AssistantMessage{Turn: turn, Step: step, Text: "Reading.", ToolCalls: []session.ToolCallRef{{CallID: call, Name: "read", Arguments: args}}, FinishReason: "tool_calls"})
			add(session.ToolCall{Turn: turn, Step: step, CallID: call, Name: "read", Arguments: args})
			add(session.ToolResult{Turn: turn, Step: step, CallID: call, Content: []tools.Content{tools.Text(result)}})
		}
		add(session.TurnEnd{Turn: turn, Reason: session.EndTurn})
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	listStates[-calls] = root
	return root, id, cwd
}

// reopenRun starts agent a on root, sends method (session/load or
// session/resume) for session id and reads up to its answer, every
// replayed update included; it returns the time from the request to the
// answer and the agent's peak RSS then (MiB).
func reopenRun(b *testing.B, a agentBin, root, method, id, cwd string) (float64, float64) {
	b.Helper()
	cmd := exec.Command(a.path)
	cmd.Env = append(os.Environ(), "DSH_STATE_DIR="+root, "DSH_API_KEY=", "DEEPSEEK_API_KEY=")
	p := startCmd(b, cmd)
	p.send(b, initLine)
	p.next(b)
	t0 := time.Now()
	p.send(b, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":{"sessionId":"`+id+`","cwd":"`+cwd+`","mcpServers":[]}}`)
	for {
		l := p.next(b)
		if bytes.HasPrefix(l, []byte(`{"jsonrpc":"2.0","id":2,`)) || bytes.Contains(l, []byte(`"id":2,"result"`)) || bytes.Contains(l, []byte(`"id":2,"error"`)) {
			if bytes.Contains(l, []byte(`"error"`)) {
				b.Fatalf("%s %s: %s", a.name, method, l)
			}
			break
		}
	}
	took := ms(time.Since(t0))
	_, hwm := procMemory(p.cmd.Process.Pid)
	p.stdin.Close()
	for range p.lines {
	}
	p.wait(b)
	return took, hwm
}

// BenchmarkHistory10000 reopens a session of 10,000 tool calls with
// session/load (its whole history replayed) and session/resume, dsh-acp
// and the other builds (DSH_BENCH_AGENTS) in turn, and reports medians:
// load-ms, load-peak-MiB (target ≤ 64), resume-ms, resume-peak-MiB, and
// NAME-... for the other builds.
func BenchmarkHistory10000(b *testing.B) {
	root, id, cwd := historyStateDir(b, 10000)
	agents := benchAgents(b)
	res := map[string][4][]float64{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range agents {
			a := agents[(i+k)%len(agents)]
			r := res[a.name]
			lt, lm := reopenRun(b, a, root, "session/load", id, cwd)
			rt, rm := reopenRun(b, a, root, "session/resume", id, cwd)
			r[0], r[1], r[2], r[3] = append(r[0], lt), append(r[1], lm), append(r[2], rt), append(r[3], rm)
			res[a.name] = r
		}
	}
	for _, a := range agents {
		prefix := ""
		if a.name != "dsh-acp" {
			prefix = a.name + "-"
		}
		r := res[a.name]
		b.ReportMetric(median(r[0]), prefix+"load-ms")
		b.ReportMetric(median(r[1]), prefix+"load-peak-MiB")
		b.ReportMetric(median(r[2]), prefix+"resume-ms")
		b.ReportMetric(median(r[3]), prefix+"resume-peak-MiB")
	}
}

// BenchmarkPromptBigHistory resumes a session of 20,000 tool calls (a
// history of about 50 MB) and runs one prompt against a model server on
// 127.0.0.1 that reads the request and answers with a short text, dsh-acp
// and the other builds (DSH_BENCH_AGENTS) in turn; it reports medians of
// the request's size (request-MB), the prompt's time (prompt-ms) and the
// agent's peak RSS over the resume and the prompt (peak-MiB; target ≤ 3x
// the request), NAME-... for the other builds.
func BenchmarkPromptBigHistory(b *testing.B) {
	root, id, cwd := historyStateDir(b, 20000)
	answer := e2etest.Text(nil, []string{"Done."}, "stop")
	var reqBytes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		reqBytes.Store(n)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, answer)
	}))
	defer srv.Close()
	agents := benchAgents(b)
	res := map[string][2][]float64{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range agents {
			a := agents[(i+k)%len(agents)]
			p := resumeProc(b, a, srv.URL, root, id, cwd)
			t0 := time.Now()
			p.send(b, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+id+`","prompt":[{"type":"text","text":"go on"}]}}`)
			for _, l := range p.answer(b, 3) {
				if bytes.Contains(l, []byte(`"id":3,"error"`)) {
					b.Fatalf("%s: %s", a.name, l)
				}
			}
			took := ms(time.Since(t0))
			_, hwm := procMemory(p.cmd.Process.Pid)
			p.stdin.Close()
			for range p.lines {
			}
			p.wait(b)
			r := res[a.name]
			r[0], r[1] = append(r[0], took), append(r[1], hwm)
			res[a.name] = r
		}
	}
	b.ReportMetric(float64(reqBytes.Load())/1e6, "request-MB")
	for _, a := range agents {
		prefix := ""
		if a.name != "dsh-acp" {
			prefix = a.name + "-"
		}
		b.ReportMetric(median(res[a.name][0]), prefix+"prompt-ms")
		b.ReportMetric(median(res[a.name][1]), prefix+"peak-MiB")
	}
}

// benchAgents is dsh-acp and the other builds DSH_BENCH_AGENTS names
// (the previous one, the floor): what the benchmarks compare, peers
// aside.
func benchAgents(b *testing.B) []agentBin {
	agents := []agentBin{{name: "dsh-acp", path: benchBinary(b)}}
	for _, a := range peerAgents() {
		if !a.peer {
			agents = append(agents, a)
		}
	}
	return agents
}

// resumeProc starts agent a on the model server at url with the state
// folder root (no titles, no compaction), initializes it and resumes
// session id in cwd (request ids 1 and 2).
func resumeProc(b *testing.B, a agentBin, url, root, id, cwd string) *proc {
	b.Helper()
	cmd := exec.Command(a.path, "--base-url", url, "--titles", "off", "--compact-threshold", "0")
	cmd.Env = append(os.Environ(), "DSH_STATE_DIR="+root, "DSH_API_KEY=bench-key", "DEEPSEEK_API_KEY=")
	p := startCmd(b, cmd)
	p.send(b, initLine)
	p.next(b)
	p.send(b, `{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":"`+id+`","cwd":"`+cwd+`","mcpServers":[]}}`)
	p.answer(b, 2)
	return p
}
