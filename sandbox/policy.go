package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Policy is what one command may write.
type Policy struct {
	Config Config
	// Project is the session cwd (absolute).
	Project string
	// Dirs are the session's additional directories, writable like the
	// project.
	Dirs []string
	// TempDir is the session's private temporary directory; TMPDIR points
	// there. It must exist.
	TempDir string
	// Caches are the tool caches commands may write under WorkspaceWrite
	// (see Caches).
	Caches []string
	// Sources are folders commands may read but never write, even inside
	// a writable one (see Sources): a writable folder inside one is left
	// out of Writable, and the write grants are built around them.
	Sources []string
	// Protected are files and folders inside a writable folder that a
	// command may read but not change, made read-only in the command's
	// mount namespace (where the host gives it namespaces; see
	// GitProtected). Landlock cannot take them out of a write grant
	// without taking their folder's new entries too.
	Protected []string
	// Pinned are folders inside a writable folder that a command may
	// change inside but not rename, remove or replace (each is made a
	// mount point of itself in the command's mount namespace, where the
	// host gives it namespaces; see GitPinned): a command cannot swap a
	// repository's .git for one whose hooks and config it wrote.
	Pinned []string
}

// devices are the device files every mode lets a command open for
// writing; ttys are those that also allow ioctl (terminal programs and
// pseudo-terminals need it; other devices' ioctls are refused from ABI 5).
var (
	devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}
	ttys    = []string{"/dev/tty", "/dev/ptmx", "/dev/pts"}
)

// sharedMemory is writable under WorkspaceWrite: POSIX shared memory and
// semaphores (Python's multiprocessing, browsers) live there.
const sharedMemory = "/dev/shm"

// Writable returns the directories p lets a command write below, in
// order: project, additional directories, TMPDIR, caches (but those
// inside Sources), /dev/shm (the device files come on top). Empty
// entries are left out; Sources inside them stay read-only.
func (p Policy) Writable() []string {
	var out []string
	add := func(dirs ...string) {
		for _, d := range dirs {
			if d != "" {
				out = append(out, d)
			}
		}
	}
	switch p.Config.mode() {
	case WorkspaceWrite:
		add(p.Project)
		add(p.Dirs...)
		add(p.TempDir)
		for _, c := range p.Caches {
			if !isHidden(c, p.Sources) {
				add(c)
			}
		}
		add(sharedMemory)
	case ReadOnly:
		add(p.TempDir)
	case Off:
		// Nothing is confined, so no directory is listed (Allows
		// answers yes for every path).
	}
	return out
}

// Allows reports whether p lets a command write path (absolute, or
// relative to dir): it is, after resolving symlinks as far as it exists,
// below one of Writable (resolved the same way) or one of the device
// files, and not below one of Sources.
func (p Policy) Allows(path, dir string) bool {
	if p.Config.mode() == Off {
		return true
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	r := resolve(path)
	if isHidden(r, resolveAll(p.Sources)) {
		return false
	}
	for _, d := range append(append([]string{}, devices...), ttys...) {
		if r == d || within(r, d) {
			return true
		}
	}
	for _, w := range p.Writable() {
		if within(r, resolve(w)) {
			return true
		}
	}
	return false
}

// resolve cleans path and resolves the symlinks of its longest existing
// prefix, keeping the missing rest as it is.
func resolve(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(path); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(path)
		if parent == path {
			return filepath.Join(path, rest)
		}
		rest = filepath.Join(filepath.Base(path), rest)
		path = parent
	}
}

// within reports whether p is dir or below it (by path segment).
func within(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// Caches returns the tool caches that builds write to, which
// WorkspaceWrite leaves writable, from the agent's environment, computed
// once:
//
//   - $XDG_CACHE_HOME, else ~/.cache (pip, yarn v1, the default Go build
//     cache ~/.cache/go-build, ...);
//   - the Go build cache and module cache: $GOCACHE and $GOMODCACHE, else
//     the values `go env -w` stored in $GOENV (default
//     ~/.config/go/env), else their defaults (~/.cache/go-build and
//     $GOPATH/pkg/mod with GOPATH ~/go), without running go;
//   - npm's cache: $npm_config_cache, else ~/.npm;
//   - Cargo's registry and git caches: $CARGO_HOME/registry and
//     $CARGO_HOME/git (CARGO_HOME defaults to ~/.cargo); not
//     $CARGO_HOME/bin, not ~/.rustup, not $GOPATH/bin: those hold programs
//     that run later outside the sandbox, so installing into them asks
//     for an unsandboxed run.
//
// A missing cache is created (like the tool would) when the tool is
// installed (go, npm, cargo in PATH; ~/.cache always), so that the first
// build inside the sandbox can fill it.
func Caches() []string {
	cachesOnce.Do(func() { caches = CachesFrom(os.LookupEnv, exec.LookPath, true) })
	return caches
}

var (
	cachesOnce sync.Once
	caches     []string
)

// CachesFrom is Caches with the environment read through env, tools
// looked up through lookPath, and, when create is set, missing caches of
// installed tools created.
func CachesFrom(env func(string) (string, bool), lookPath func(string) (string, error), create bool) []string {
	get := func(k string) string {
		if v, ok := env(k); ok {
			return v
		}
		return ""
	}
	home := get("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	abs := func(p string) string {
		if p == "" || !filepath.IsAbs(p) {
			return ""
		}
		return filepath.Clean(p)
	}
	installed := func(tool string) bool {
		_, err := lookPath(tool)
		return err == nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(dir string, mk bool) {
		dir = abs(dir)
		if dir == "" || seen[dir] {
			return
		}
		seen[dir] = true
		if create && mk {
			_ = os.MkdirAll(dir, 0o755)
		}
		out = append(out, dir)
	}
	xdg := abs(get("XDG_CACHE_HOME"))
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".cache")
	}
	if create && xdg != "" {
		_ = os.MkdirAll(xdg, 0o700)
	}
	add(xdg, false)

	goEnv := goEnvFile(get, home)
	goVar := func(k string) string {
		if v := get(k); v != "" {
			return v
		}
		return goEnv[k]
	}
	haveGo := installed("go")
	if c := goVar("GOCACHE"); c != "off" {
		if c == "" && xdg != "" {
			c = filepath.Join(xdg, "go-build")
		}
		add(c, haveGo)
	}
	add(goModCache(goVar, home), haveGo)

	npm := get("npm_config_cache")
	if npm == "" && home != "" {
		npm = filepath.Join(home, ".npm")
	}
	add(npm, installed("npm"))

	if cargo := cargoHome(get, home); abs(cargo) != "" {
		haveCargo := installed("cargo")
		add(filepath.Join(cargo, "registry"), haveCargo)
		add(filepath.Join(cargo, "git"), haveCargo)
	}
	return out
}

// goModCache is the Go module cache: goVar's GOMODCACHE, else the first
// GOPATH's pkg/mod (GOPATH defaults to ~/go).
func goModCache(goVar func(string) string, home string) string {
	if mod := goVar("GOMODCACHE"); mod != "" {
		return mod
	}
	gopath := goVar("GOPATH")
	if gopath == "" && home != "" {
		gopath = filepath.Join(home, "go")
	}
	if first, _, _ := strings.Cut(gopath, string(filepath.ListSeparator)); first != "" {
		return filepath.Join(first, "pkg", "mod")
	}
	return ""
}

// cargoHome is $CARGO_HOME, else ~/.cargo.
func cargoHome(get func(string) string, home string) string {
	if c := get("CARGO_HOME"); c != "" {
		return c
	}
	if home != "" {
		return filepath.Join(home, ".cargo")
	}
	return ""
}

// Sources returns the package sources inside the caches that builds
// read and that later run outside the sandbox, which commands may read
// but not write even where their cache is writable (Policy.Sources),
// from the agent's environment, computed once: the Go module cache
// (every module's source, and its download cache, which go verifies
// against go.sum only when it extracts), Cargo's unpacked registry
// sources ($CARGO_HOME/registry/src) and git checkouts
// ($CARGO_HOME/git/checkouts). A build with a warm cache only reads them;
// one that must download asks to run outside the sandbox.
func Sources() []string {
	sourcesOnce.Do(func() { sources = SourcesFrom(os.LookupEnv) })
	return sources
}

var (
	sourcesOnce sync.Once
	sources     []string
)

// SourcesFrom is Sources with the environment read through env.
func SourcesFrom(env func(string) (string, bool)) []string {
	get := func(k string) string {
		v, _ := env(k)
		return v
	}
	home := get("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	goEnv := goEnvFile(get, home)
	goVar := func(k string) string {
		if v := get(k); v != "" {
			return v
		}
		return goEnv[k]
	}
	var out []string
	for _, p := range []string{goModCache(goVar, home)} {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	if cargo := cargoHome(get, home); filepath.IsAbs(cargo) {
		out = append(out, filepath.Join(cargo, "registry", "src"), filepath.Join(cargo, "git", "checkouts"))
	}
	return out
}

// goEnvFile reads the KEY=VALUE lines `go env -w` writes, from $GOENV or
// the user config dir's go/env.
func goEnvFile(get func(string) string, home string) map[string]string {
	path := get("GOENV")
	if path == "off" {
		return nil
	}
	if path == "" {
		cfg := get("XDG_CONFIG_HOME")
		if cfg == "" && home != "" {
			cfg = filepath.Join(home, ".config")
		}
		if cfg == "" {
			return nil
		}
		path = filepath.Join(cfg, "go", "env")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && k != "" && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}

// DescribeCaches is the one-line state of the tool caches under c for
// `dsh-acp --version`: which stay writable to commands (builds write
// them, so a hostile command could poison them) and which package
// sources are read-only, or "" when c confines nothing.
func DescribeCaches(c Config) string {
	if c.mode() != WorkspaceWrite {
		return ""
	}
	var writable []string
	for _, d := range CachesFrom(os.LookupEnv, exec.LookPath, false) {
		if !isHidden(d, Sources()) {
			writable = append(writable, d)
		}
	}
	return "writable " + strings.Join(writable, ", ") + "; read-only " + strings.Join(Sources(), ", ")
}
