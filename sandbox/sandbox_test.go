package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": WorkspaceWrite, "workspace-write": WorkspaceWrite, "read-only": ReadOnly, "off": Off} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("readonly"); err == nil || !strings.Contains(err.Error(), "workspace-write, read-only, off") {
		t.Errorf("ParseMode(readonly): %v", err)
	}
}

func TestDescribe(t *testing.T) {
	ll7 := Host{LandlockABI: 7, Namespaces: true}
	ll3 := Host{LandlockABI: 3, NamespaceReason: "no user and PID namespaces: operation not permitted"}
	none := Host{LandlockReason: "kernel has no Landlock", NamespaceReason: "no user and PID namespaces: x"}
	cases := []struct {
		c    Config
		h    Host
		want string
	}{
		{Config{}, ll7, "landlock ABI 7 (workspace-write)"},
		{Config{Mode: ReadOnly, DenyNetwork: true}, ll7, "landlock ABI 7 (read-only, network denied: an empty network namespace; reachable: pathname unix sockets but the well-known ones (docker, containerd, podman, dbus, ssh-agent, X11, Wayland))"},
		{Config{DenyNetwork: true}, Host{LandlockABI: 7}, "landlock ABI 7 (workspace-write, network denied: TCP only; reachable: UDP, unix sockets)"},
		{Config{DenyNetwork: true}, ll3, "landlock ABI 3 (workspace-write; network left open: needs ABI 4; signals and abstract sockets not scoped: needs ABI 6)"},
		{Config{Mode: ReadOnly}, Host{LandlockABI: 6}, "landlock ABI 6 (read-only)"},
		{Config{Mode: Off}, ll7, "off"},
		{Config{}, none, "unavailable (kernel has no Landlock)"},
	}
	for _, c := range cases {
		if got := Describe(c.c, c.h); got != c.want {
			t.Errorf("Describe(%+v, %+v) = %q, want %q", c.c, c.h, got, c.want)
		}
	}
	if got := DescribeProcesses(Config{}, ll7); got != "a PID namespace per command (its processes die with the agent)" {
		t.Errorf("DescribeProcesses ns: %q", got)
	}
	if got := DescribeProcesses(Config{}, ll3); !strings.HasPrefix(got, "subreaper (") || !strings.Contains(got, "operation not permitted") {
		t.Errorf("DescribeProcesses no ns: %q", got)
	}
	if got := DescribeProcesses(Config{Mode: Off}, ll7); !strings.Contains(got, "sandbox off") {
		t.Errorf("DescribeProcesses off: %q", got)
	}
	if (Config{}).Confines(none) || (Config{Mode: Off}).Confines(ll7) || !(Config{Mode: ReadOnly}).Confines(ll3) {
		t.Error("Confines is wrong")
	}
}

func TestWritableAndAllows(t *testing.T) {
	proj, tmp, cache, other := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	// A link inside the project to a directory outside it: writing through
	// it is writing outside.
	if err := os.Symlink(other, filepath.Join(proj, "out")); err != nil {
		t.Fatal(err)
	}
	pol := Policy{Project: proj, Dirs: []string{"/extra"}, TempDir: tmp, Caches: []string{cache}}
	if got, want := pol.Writable(), []string{proj, "/extra", tmp, cache, "/dev/shm"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Writable = %q, want %q", got, want)
	}
	ro := pol
	ro.Config.Mode = ReadOnly
	if got := ro.Writable(); !reflect.DeepEqual(got, []string{tmp}) {
		t.Errorf("read-only Writable = %q", got)
	}
	cases := []struct {
		pol  Policy
		path string
		want bool
	}{
		{pol, filepath.Join(proj, "a/b.txt"), true},
		{pol, "new.txt", true}, // relative to dir = proj
		{pol, "../x", false},
		{pol, filepath.Join(proj, "out", "x"), false},
		{pol, filepath.Join(tmp, "t"), true},
		{pol, filepath.Join(cache, "go-build/x"), true},
		{pol, proj + "2/x", false},
		{pol, "/dev/null", true},
		{pol, "/dev/pts/3", true},
		{pol, "/etc/passwd", false},
		{ro, filepath.Join(proj, "a"), false},
		{ro, filepath.Join(tmp, "a"), true},
		{Policy{Config: Config{Mode: Off}}, "/etc/passwd", true},
	}
	for _, c := range cases {
		if got := c.pol.Allows(c.path, proj); got != c.want {
			t.Errorf("%s Allows(%q) = %v, want %v", c.pol.Config.mode(), c.path, got, c.want)
		}
	}
}

// TestBlockedRule: the sandbox line's rule on the messages real tools
// print, and the cases where it must stay silent.
func TestBlockedRule(t *testing.T) {
	proj, tmp, outside := t.TempDir(), t.TempDir(), t.TempDir()
	pol := Policy{Project: proj, TempDir: tmp}
	x := filepath.Join(outside, "x")
	cases := []struct {
		out  string
		want string // "" for no line
	}{
		{"touch: cannot touch '" + x + "': Permission denied", x},
		{"bash: line 1: " + x + ": Permission denied", x},
		{"open " + x + ": permission denied", x},
		{"PermissionError: [Errno 13] Permission denied: '" + x + "'", x},
		{"npm ERR! Error: EACCES: permission denied, mkdir '" + x + "'", x},
		{"mkdir: cannot create directory ‘" + x + "’: Permission denied", x},
		{"cp: cannot create regular file '../up': Permission denied", filepath.Join(filepath.Dir(proj), "up")},
		{"bash: line 1: up2: Permission denied", ""}, // relative to the project
		{"bash: ../up2: Permission denied", filepath.Join(filepath.Dir(proj), "up2")},
		{"error: " + x + " is bad", ""},                                         // no denial
		{"Permission denied", ""},                                               // no path
		{"touch: cannot touch 'in.txt': Permission denied", ""},                 // inside the project
		{"bash: " + filepath.Join(tmp, "t") + ": Permission denied", ""},        // TMPDIR
		{"ssh: connect to host example.com: Permission denied (publickey)", ""}, // no path
		{"fetch https://example.com/x failed: permission denied", ""},
	}
	for _, c := range cases {
		got, ok := pol.Blocked("first line\n"+c.out+"\nlast line", proj)
		if c.want == "" && ok {
			t.Errorf("%q: blocked %q, want no line", c.out, got)
		}
		if c.want != "" && (!ok || got != c.want) {
			t.Errorf("%q: got %q, %v; want %q", c.out, got, ok, c.want)
		}
	}
	if _, ok := (Policy{Config: Config{Mode: Off}}).Blocked("touch: cannot touch '"+x+"': Permission denied", proj); ok {
		t.Error("a line under mode off")
	}
}

func TestCachesFrom(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, "cfg")
	if err := os.MkdirAll(filepath.Join(cfg, "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "go", "env"), []byte("GOMODCACHE=/mods\n# comment\nGOPATH=/ignored\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	envs := map[string]string{"HOME": home, "XDG_CONFIG_HOME": cfg, "GOCACHE": "/gocache", "CARGO_HOME": "/cargo"}
	env := func(k string) (string, bool) { v, ok := envs[k]; return v, ok }
	none := func(string) (string, error) { return "", errors.New("not found") }
	got := CachesFrom(env, none, false)
	want := []string{filepath.Join(home, ".cache"), "/gocache", "/mods", filepath.Join(home, ".npm"), "/cargo/registry", "/cargo/git"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CachesFrom = %q\nwant %q", got, want)
	}
	// Defaults, and creation of an installed tool's missing cache.
	envs = map[string]string{"HOME": home, "XDG_CONFIG_HOME": cfg + "-none", "GOPATH": "/gp1:/gp2", "npm_config_cache": filepath.Join(home, "npmc")}
	npmOnly := func(tool string) (string, error) {
		if tool == "npm" {
			return "/usr/bin/npm", nil
		}
		return "", errors.New("not found")
	}
	got = CachesFrom(env, npmOnly, true)
	want = []string{filepath.Join(home, ".cache"), filepath.Join(home, ".cache", "go-build"), "/gp1/pkg/mod", filepath.Join(home, "npmc"),
		filepath.Join(home, ".cargo", "registry"), filepath.Join(home, ".cargo", "git")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CachesFrom = %q\nwant %q", got, want)
	}
	for dir, made := range map[string]bool{filepath.Join(home, "npmc"): true, filepath.Join(home, ".cache"): true,
		filepath.Join(home, ".cache", "go-build"): false, filepath.Join(home, ".cargo"): false} {
		if _, err := os.Stat(dir); (err == nil) != made {
			t.Errorf("%s: created %v, want %v", dir, err == nil, made)
		}
	}
}
