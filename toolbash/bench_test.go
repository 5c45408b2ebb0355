package toolbash

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/sandbox"
	"github.com/dsh-acp/dsh-acp/tools"
)

// childTimed wraps a command that writes size bytes so that it prints its
// own run time in ms on stderr (the last line).
func childTimed(size int, sink string) string {
	return fmt.Sprintf(`s=$(date +%%s%%N); head -c %d /dev/zero | tr '\0' 'x' %s; e=$(date +%%s%%N); echo $(( (e-s)/1000000 )) >&2`, size, sink)
}

func childMs(b *testing.B, result string) float64 {
	i := strings.LastIndex(result, "[stderr]\n")
	if i < 0 {
		b.Fatalf("no timing in %q", result[max(0, len(result)-200):])
	}
	ms, err := strconv.ParseFloat(strings.TrimSpace(result[i+len("[stderr]\n"):]), 64)
	if err != nil {
		b.Fatal(err)
	}
	return ms
}

// BenchmarkStream runs commands printing 25, 50 and 100 MB as foreground
// bash calls whose reports are JSON-encoded (as the bridge would) and
// reports: the child's own run time (child-ms) against the same command
// writing to /dev/null (devnull-ms) and to a pipe drained by cat
// (pipe-ms), the call's wall time, the reports per
// second while the live view streamed, and the bytes shown live.
func BenchmarkStream(b *testing.B) {
	m := New(Options{TempDir: b.TempDir()})
	defer m.Shutdown()
	var bash tools.Tool
	for _, t := range m.Tools() {
		if t.Name == "bash" {
			bash = t
		}
	}
	run := func(cmd string, progress func(tools.Progress)) string {
		args, _ := json.Marshal(map[string]any{"command": cmd, "description": "bench", "timeoutMs": 600000})
		out, err := bash.Execute(context.Background(), &tools.Exec{CallID: "b", Name: "bash", Args: args, Progress: progress})
		if err != nil {
			b.Fatal(err)
		}
		return tools.JoinText(out.Content)
	}
	for _, mb := range []int{25, 50, 100} {
		size := mb * 1000 * 1000
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			var child, devnull, pipe, wall, rate, shown float64
			for range b.N {
				devnull += childMs(b, run(childTimed(size, ">/dev/null"), nil))
				pipe += childMs(b, run(childTimed(size, "| cat >/dev/null"), nil))
				var mu sync.Mutex
				var first, last time.Time
				reports, bytes := 0, 0
				enc := json.NewEncoder(io.Discard)
				start := time.Now()
				res := run(childTimed(size, ""), func(p tools.Progress) {
					_ = enc.Encode(map[string]any{"terminal_output": map[string]string{"data": p.Output}})
					mu.Lock()
					now := time.Now()
					if reports == 0 {
						first = now
					}
					last = now
					reports++
					bytes += len(p.Output)
					mu.Unlock()
				})
				wall += float64(time.Since(start).Milliseconds())
				child += childMs(b, res)
				if span := last.Sub(first).Seconds(); reports > 1 && span > 0 {
					rate += float64(reports-1) / span
				}
				shown += float64(bytes)
			}
			n := float64(b.N)
			b.ReportMetric(child/n, "child-ms")
			b.ReportMetric(devnull/n, "devnull-ms")
			b.ReportMetric(pipe/n, "pipe-ms")
			b.ReportMetric(wall/n, "wall-ms")
			b.ReportMetric(rate/n, "reports/s")
			b.ReportMetric(shown/n/(1<<20), "live-MiB")
		})
	}
}

// BenchmarkSandboxTrue runs `true` through the bash tool (a foreground
// call in a session) under each sandbox mode and reports the median call
// time in ms (median-ms). The cost of the sandbox itself against the
// agent's former direct spawn is sandbox.BenchmarkStart's.
func BenchmarkSandboxTrue(b *testing.B) {
	for _, mode := range []sandbox.Mode{sandbox.Off, sandbox.ReadOnly, sandbox.WorkspaceWrite} {
		b.Run(string(mode), func(b *testing.B) {
			m := New(Options{TempDir: b.TempDir(), Sandbox: sandbox.Config{Mode: mode}})
			defer m.Shutdown()
			bash := m.Tools()[0]
			s := tools.NewSession("bench", b.TempDir())
			args := json.RawMessage(`{"command":"true","description":"bench"}`)
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				out, err := bash.Execute(context.Background(), &tools.Exec{CallID: "b", Name: "bash", Args: args, Session: s})
				if err != nil || tools.JoinText(out.Content) != "(no output)" {
					b.Fatal(err, out)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2])/1e6, "median-ms")
		})
	}
}
