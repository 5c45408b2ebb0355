package sandbox

import "sync"

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
)

// Probe finds out, once per process, what the kernel offers: the
// Landlock ABI, and whether a helper can set up namespaces and confine a
// command there (it starts the helper twice, a few milliseconds).
func Probe() Host {
	probeOnce.Do(func() { probed = probe() })
	return probed
}
