//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkStart measures the sandbox's cost per command: `bash -c true`
// started and waited for (shell and helper), output to /dev/null, as the
// agent started it before the sandbox ("direct": the command in its own
// process group, no helper) and through the helper under each mode:
// "off" (the subreaper helper alone), "workspace-write/no-ns" (Landlock,
// subreaper), "read-only" and "workspace-write" (Landlock in a PID
// namespace), and "workspace-write/hidden-net" (with the default secrets
// hidden, the sources read-only and the network denied: a network
// namespace and the well-known sockets covered). It reports the median
// in ms (median-ms) next to the mean.
func BenchmarkStart(b *testing.B) {
	h := Probe()
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Fatal(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	dir := b.TempDir()
	caches := Caches()
	cases := []struct {
		name   string
		mode   Mode
		direct bool
		noNS   bool
		full   bool
	}{
		{"direct", Off, true, false, false},
		{"off", Off, false, false, false},
		{"workspace-write/no-ns", WorkspaceWrite, false, true, false},
		{"read-only", ReadOnly, false, false, false},
		{"workspace-write", WorkspaceWrite, false, false, false},
		{"workspace-write/hidden-net", WorkspaceWrite, false, false, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.mode != Off && h.LandlockABI == 0 {
				b.Skip(h.LandlockReason)
			}
			noNamespaces = c.noNS
			defer func() { noNamespaces = false }()
			cmd := Command{Path: bash, Args: []string{"bash", "-c", "true"}, Dir: dir, Env: os.Environ(), Stdout: null, Stderr: null,
				Policy: Policy{Config: Config{Mode: c.mode}, Project: dir, TempDir: dir, Caches: caches}}
			if c.full {
				cmd.Policy.Config.Hidden, cmd.Policy.Config.DenyNetwork, cmd.Policy.Sources = Secrets(""), true, Sources()
			}
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				var p *Process
				var err error
				if c.direct {
					p, err = startDirect(cmd)
				} else {
					p, err = Start(cmd)
				}
				if err != nil {
					b.Fatal(err)
				}
				if ws := p.WaitCommand(); ws.ExitStatus() != 0 {
					b.Fatalf("status %v", ws)
				}
				times = append(times, time.Since(start))
				<-p.Exited()
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2])/1e6, "median-ms")
		})
	}
}

// BenchmarkCarveSecrets is the carving of "/" around the default
// secrets, as each confined command's ruleset builds it.
func BenchmarkCarveSecrets(b *testing.B) {
	hidden := resolveAll(Secrets(""))
	for b.Loop() {
		carve("/", hidden)
	}
}
