package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// helperProbes counts the helper processes probes started (tests read
// it).
var helperProbes atomic.Int32

// probeKey is what a probe's answer depends on: the boot (the kernel
// and its settings), the executable (a new build may probe otherwise),
// the user, the temporary folder the probe's rules name, and the
// Landlock ABI the kernel reports. A cached answer counts only for the
// same key.
type probeKey struct {
	Boot  string `json:"boot"`
	Exe   string `json:"exe"`
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"`
	UID   int    `json:"uid"`
	GID   int    `json:"gid"`
	Temp  string `json:"temp"`
	ABI   int    `json:"abi"`
}

// cachedProbe is the probe cache file: the key and the answer.
type cachedProbe struct {
	Key             probeKey `json:"key"`
	LandlockABI     int      `json:"landlockAbi"`
	LandlockReason  string   `json:"landlockReason"`
	Namespaces      bool     `json:"namespaces"`
	NamespaceReason string   `json:"namespaceReason"`
}

// currentProbeKey is this process's probeKey; ok is false when a part
// cannot be read (nothing is cached then).
func currentProbeKey(abi int) (probeKey, bool) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return probeKey{}, false
	}
	exe, err := os.Readlink(selfExe)
	if err != nil {
		return probeKey{}, false
	}
	st, err := os.Stat(selfExe)
	if err != nil {
		return probeKey{}, false
	}
	return probeKey{Boot: strings.TrimSpace(string(boot)), Exe: exe, Size: st.Size(), MTime: st.ModTime().UnixNano(),
		UID: os.Getuid(), GID: os.Getgid(), Temp: os.TempDir(), ABI: abi}, true
}

// readProbeCache returns the cached answer for key, if the cache file
// holds one (a file of another key, or not ours, holds none).
func readProbeCache(key probeKey) (Host, bool) {
	path := probeCachePath()
	if path == "" {
		return Host{}, false
	}
	b, err := readSmall(path, 4096)
	var c cachedProbe
	if err != nil || json.Unmarshal(b, &c) != nil || c.Key != key {
		return Host{}, false
	}
	return Host{LandlockABI: c.LandlockABI, LandlockReason: c.LandlockReason, Namespaces: c.Namespaces,
		NamespaceReason: c.NamespaceReason, helper: true}, true
}

// writeProbeCache keeps h as the answer for key (a temporary file
// renamed over the cache, mode 0600); failures are ignored: the next
// process probes again.
func writeProbeCache(key probeKey, h Host) {
	path := probeCachePath()
	if path == "" {
		return
	}
	b, err := json.Marshal(cachedProbe{Key: key, LandlockABI: h.LandlockABI, LandlockReason: h.LandlockReason,
		Namespaces: h.Namespaces, NamespaceReason: h.NamespaceReason})
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil && cerr == nil && os.Rename(f.Name(), path) == nil {
		return
	}
	_ = os.Remove(f.Name())
}
