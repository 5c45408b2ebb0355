//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSourcesFrom: the Go module cache and Cargo's unpacked sources and
// checkouts, from the environment (and go env -w's file).
func TestSourcesFrom(t *testing.T) {
	envs := map[string]string{"HOME": "/h", "GOMODCACHE": "/mods", "CARGO_HOME": "/cargo"}
	env := func(k string) (string, bool) { v, ok := envs[k]; return v, ok }
	if got, want := SourcesFrom(env), []string{"/mods", "/cargo/registry/src", "/cargo/git/checkouts"}; !slices.Equal(got, want) {
		t.Errorf("SourcesFrom = %q, want %q", got, want)
	}
	envs = map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/nonexistent"}
	if got, want := SourcesFrom(env), []string{"/h/go/pkg/mod", "/h/.cargo/registry/src", "/h/.cargo/git/checkouts"}; !slices.Equal(got, want) {
		t.Errorf("SourcesFrom defaults = %q, want %q", got, want)
	}
	p := Policy{Config: Config{Mode: WorkspaceWrite}, Project: "/p", Caches: []string{"/h/.cache", "/mods"}, Sources: []string{"/mods", "/h/.cache/src"}}
	if got := p.Writable(); slices.Contains(got, "/mods") || !slices.Contains(got, "/h/.cache") {
		t.Errorf("Writable = %q", got)
	}
	if p.Allows("/mods/x", "/") || p.Allows("/h/.cache/src/y", "/") || !p.Allows("/h/.cache/z", "/") {
		t.Error("Allows does not keep the sources read-only")
	}
}

// TestSourcesReadOnly: a confined command cannot write the Go module
// cache (nor a source folder inside a writable cache, whose other
// folders stay writable), while a build of this module from the warm
// cache still works.
func TestSourcesReadOnly(t *testing.T) {
	needLandlock(t, 1)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed")
	}
	out, err := exec.Command(goBin, "env", "GOMODCACHE", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	mod, gomod := lines[0], lines[1]
	if _, err := os.Stat(filepath.Join(mod, "cache")); err != nil || gomod == "" {
		t.Skipf("no warm module cache (%s) or module (%q)", mod, gomod)
	}
	cache := t.TempDir()
	src := filepath.Join(cache, "src")
	os.Mkdir(src, 0o755)
	os.Mkdir(filepath.Join(cache, "other"), 0o755)
	pol := Policy{Config: Config{Mode: WorkspaceWrite}, Project: t.TempDir(), TempDir: t.TempDir(),
		Caches: append(Caches(), mod, cache), Sources: append(Sources(), mod, src)}
	script := `touch "` + mod + `/dsh-sandbox-probe" 2>/dev/null && echo WROTE-MOD; touch "` + src + `/x" 2>/dev/null && echo WROTE-SRC
touch "` + cache + `/other/ok" && echo cache-ok
` + goBin + ` build -o "$TMPDIR/p" ./permission && echo build-ok`
	got, ws := run(t, pol, filepath.Dir(gomod), script)
	os.Remove(filepath.Join(mod, "dsh-sandbox-probe"))
	if strings.Contains(got, "WROTE") {
		t.Errorf("a read-only source was written:\n%s", got)
	}
	if !strings.Contains(got, "cache-ok") || !strings.Contains(got, "build-ok") {
		t.Errorf("the cache write or the build failed (%v):\n%s", ws, got)
	}
}
