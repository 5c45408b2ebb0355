package sandbox

import (
	"sync"
	"sync/atomic"
)

// Host is what the running kernel offers, found by Probe.
type Host struct {
	// LandlockABI is the Landlock ABI version commands are confined with;
	// 0 when they cannot be (then LandlockReason says why, e.g. "kernel
	// has no Landlock").
	LandlockABI    int
	LandlockReason string
	// Namespaces reports whether each command can run in its own user,
	// PID and mount namespaces; when not, NamespaceReason says why.
	Namespaces      bool
	NamespaceReason string
	// helper reports whether the re-exec helper starts at all (it needs
	// /proc/self/exe); without it commands start as before, unconfined.
	helper bool
}

var (
	probeOnce sync.Once
	probed    Host
	// probeDone is set once probed holds Probe's answer.
	probeDone atomic.Bool
	// probeRuns counts the probes run in this process (tests read it).
	probeRuns atomic.Int32
)

// probeCache is the file SetProbeCache named ("" or nil: none).
var probeCache atomic.Pointer[string]

// SetProbeCache names the file Probe keeps its answer in for the other
// processes of the same boot, executable and user (linux; elsewhere
// nothing is probed), so that each does not start the helper again: a
// file in the agent's state folder, which commands can neither read nor
// write (a forged answer could weaken their confinement). "" keeps no
// cache. Call it before the first Probe.
func SetProbeCache(path string) { probeCache.Store(&path) }

// probeCachePath is the file SetProbeCache named, or "".
func probeCachePath() string {
	if p := probeCache.Load(); p != nil {
		return *p
	}
	return ""
}

// Probe finds out, once per process, what the kernel offers: the
// Landlock ABI, and whether a helper can set up namespaces and confine a
// command there (it starts the helper twice, a few milliseconds). Nothing
// calls it before it is needed: Start does, for the first command, and so
// do the questions only its answer settles (the bash tool's description).
// Concurrent callers wait for the one probe.
func Probe() Host {
	probeOnce.Do(func() {
		probeRuns.Add(1)
		probed = probe()
		probeDone.Store(true)
	})
	return probed
}

// Probed returns Probe's answer and true once Probe has returned in this
// process, else the zero Host and false; it never probes.
func Probed() (Host, bool) {
	if !probeDone.Load() {
		return Host{}, false
	}
	return probed, true
}

// Quick is what can be known without starting a process: Probe's answer
// once it ran; before that, what the kernel says of Landlock by itself
// (its ABI, or why there is none), with Namespaces false and
// NamespaceReason "not probed yet". A kernel whose Landlock Quick reports
// may still refuse it to the helper (Probe then says so); a kernel
// without one never confines. It costs a system call or two.
func Quick() Host {
	if h, ok := Probed(); ok {
		return h
	}
	h, _ := quick()
	return h
}
