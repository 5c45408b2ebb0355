//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// freshProbe makes Probe probe again (as in a new process) with
// landlockABI replaced by abi, and restores both after t.
func freshProbe(t *testing.T, abi func() (int, error)) {
	t.Helper()
	oldABI, oldHost, oldDone := landlockABI, probed, probeDone.Load()
	landlockABI = abi
	probeOnce, probed = sync.Once{}, Host{}
	probeDone.Store(false)
	t.Cleanup(func() {
		landlockABI, probed = oldABI, oldHost
		probeOnce = sync.Once{}
		if oldDone {
			probeOnce.Do(func() {})
		}
		probeDone.Store(oldDone)
	})
}

// TestProbeLandlockOff: with Landlock forced off (the kernel answers
// ENOSYS), Quick already says so without starting anything, Probe runs
// once however many ask at once, and its answer is "no Landlock" with the
// namespaces probed as on the real kernel; commands then start
// unconfined.
func TestProbeLandlockOff(t *testing.T) {
	real := Probe() // the real kernel's answer, for the namespaces
	freshProbe(t, func() (int, error) { return 0, syscall.ENOSYS })
	runs := probeRuns.Load()
	q := Quick()
	if q.LandlockABI != 0 || q.LandlockReason != "kernel has no Landlock" || q.Namespaces || q.NamespaceReason != "not probed yet" {
		t.Errorf("Quick = %+v", q)
	}
	if _, ok := Probed(); ok || probeRuns.Load() != runs {
		t.Fatalf("Quick probed (Probed %v, %d probes)", ok, probeRuns.Load()-runs)
	}
	var wg sync.WaitGroup
	hosts := make([]Host, 8)
	for i := range hosts {
		wg.Go(func() { hosts[i] = Probe() })
	}
	wg.Wait()
	if n := probeRuns.Load() - runs; n != 1 {
		t.Errorf("%d probes ran, want 1", n)
	}
	want := Host{LandlockReason: "kernel has no Landlock", Namespaces: real.Namespaces, NamespaceReason: real.NamespaceReason, helper: real.helper}
	for i, h := range hosts {
		if h != want {
			t.Errorf("Probe %d = %+v, want %+v", i, h, want)
		}
	}
	if h, ok := Probed(); !ok || h != want {
		t.Errorf("Probed = %+v, %v", h, ok)
	}
	if Quick() != want {
		t.Errorf("Quick after the probe = %+v", Quick())
	}
	if (Config{}).Confines(want) {
		t.Error("workspace-write confines without Landlock")
	}
	dir := t.TempDir()
	p, r := startOwned(t, Policy{Config: Config{}, Project: dir, TempDir: dir}, dir, "echo hi > /tmp/x-probe-test-$$ && rm /tmp/x-probe-test-$$ && echo wrote", "")
	buf := make([]byte, 16)
	n, _ := r.Read(buf)
	if ws := p.WaitCommand(); string(buf[:n]) != "wrote\n" || ws.ExitStatus() != 0 || p.Confined {
		t.Errorf("unconfined command: %q, %v, confined %v", buf[:n], ws, p.Confined)
	}
}

// TestQuickMatchesProbe: on this kernel, what Quick says of Landlock
// before the probe is what the probe finds (unless the helper is refused
// Landlock, which the probe alone can tell).
func TestQuickMatchesProbe(t *testing.T) {
	freshProbe(t, landlockABI)
	q := Quick()
	h := Probe()
	if q.LandlockABI != h.LandlockABI && h.LandlockABI != 0 {
		t.Errorf("Quick's ABI %d, Probe's %d", q.LandlockABI, h.LandlockABI)
	}
	if q.LandlockABI == 0 && q.LandlockReason != h.LandlockReason {
		t.Errorf("Quick's reason %q, Probe's %q", q.LandlockReason, h.LandlockReason)
	}
}

// TestProbeCache: with a cache file named, the first process's probe
// starts the helper and keeps its answer; the next (same boot,
// executable, user) takes the answer from the file without starting
// anything; a file of another key, or not JSON, is probed over.
func TestProbeCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "sandbox-probe.json")
	old := probeCachePath()
	SetProbeCache(path)
	t.Cleanup(func() { SetProbeCache(old) })
	freshProbe(t, landlockABI)
	started := helperProbes.Load()
	first := Probe()
	if helperProbes.Load() == started {
		t.Fatal("the first probe started no helper")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no cache file: %v", err)
	}
	freshProbe(t, landlockABI)
	started = helperProbes.Load()
	if h := Probe(); h != first || helperProbes.Load() != started {
		t.Errorf("from the cache: %+v (%d helpers started), want %+v and none", h, helperProbes.Load()-started, first)
	}
	b, _ := os.ReadFile(path)
	for _, bad := range []string{strings.Replace(string(b), `"uid":`, `"uid":1`, 1), "not json"} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		freshProbe(t, landlockABI)
		started = helperProbes.Load()
		if h := Probe(); h != first || helperProbes.Load() == started {
			t.Errorf("over %.40q: %+v (%d helpers started), want %+v probed again", bad, h, helperProbes.Load()-started, first)
		}
	}
}

// TestProbeCacheOdd: a cache file that is a directory, a fifo no one
// writes, or a symlink to an endless file, is probed over (the read stops after the largest
// answer, instead of reading /dev/zero until memory runs out), and the
// answer is the probe's.
func TestProbeCacheOdd(t *testing.T) {
	dir := t.TempDir()
	old := probeCachePath()
	t.Cleanup(func() { SetProbeCache(old) })
	freshProbe(t, landlockABI)
	want := Probe()
	for _, odd := range []string{"dir", "zero", "fifo"} {
		path := filepath.Join(dir, odd)
		var err error
		switch odd {
		case "dir":
			err = os.Mkdir(path, 0o700)
		case "zero":
			err = os.Symlink("/dev/zero", path)
		case "fifo":
			err = syscall.Mkfifo(path, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		SetProbeCache(path)
		freshProbe(t, landlockABI)
		done := make(chan Host)
		go func() { done <- Probe() }()
		select {
		case h := <-done:
			if h != want {
				t.Errorf("%s: %+v, want %+v", odd, h, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the probe is still reading the cache file", odd)
		}
	}
}
