//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/unpriv"
)

// TestSecrets: the agent's config and state folders and the other
// tools' credentials, under HOME and XDG_CONFIG_HOME.
func TestSecrets(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	got := Secrets("/state/dsh-acp")
	want := []string{"/cfg/dsh-acp", "/cfg/gh", "/state/dsh-acp", "/home/u/.ssh", "/home/u/.gnupg", "/home/u/.aws",
		"/home/u/.netrc", "/home/u/.docker/config.json", "/home/u/.config/gh"}
	if !slices.Equal(got, want) {
		t.Errorf("Secrets = %q, want %q", got, want)
	}
	// The user may let commands read another tool's credentials, never
	// the agent's own folders.
	got = Secrets("/state/dsh-acp", "/home/u/.ssh/", "/cfg/dsh-acp", "/state/dsh-acp")
	want = slices.DeleteFunc(slices.Clone(want), func(p string) bool { return p == "/home/u/.ssh" })
	if !slices.Equal(got, want) {
		t.Errorf("Secrets with ~/.ssh allowed = %q, want %q", got, want)
	}
}

// TestCarve: a carving grants everything but the hidden paths and lists
// the folders on the way; a symlink into a hidden path is not granted.
func TestCarve(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/x", "a/secret/k", "b/y", "f"} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(root, p), nil, 0o644)
	}
	os.Symlink("a/secret", filepath.Join(root, "link"))
	os.Symlink("b", filepath.Join(root, "blink"))
	c := carve(root, []string{filepath.Join(root, "a", "secret")})
	j := func(ps ...string) []string {
		var out []string
		for _, p := range ps {
			out = append(out, filepath.Join(root, p))
		}
		return out
	}
	if !slices.Equal(c.dirs, j("b", "blink")) || !slices.Equal(c.files, j("a/x", "f")) || !slices.Equal(c.listed, j("", "a")) {
		t.Errorf("carve = %+v", c)
	}
	if c := carve(root, []string{"/elsewhere"}); !slices.Equal(c.dirs, []string{root}) || len(c.files)+len(c.listed) != 0 {
		t.Errorf("carve with nothing hidden below = %+v", c)
	}
}

// TestHiddenSecrets: a confined command cannot read the hidden paths
// (the credentials file, the state folder's logs, ~/.ssh, also inside a
// writable folder) though it can list their names; ordinary reads (the
// project, /usr, other files of HOME such as .gitconfig, other folders
// of the config home) still work. Run as root and as an unprivileged
// user.
func TestHiddenSecrets(t *testing.T) {
	needLandlock(t, 1)
	if !unpriv.InChild(t) {
		checkHiddenSecrets(t)
		unpriv.Run(t)
		return
	}
	checkHiddenSecrets(t)
}

func checkHiddenSecrets(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	files := map[string]string{
		".ssh/id_ed25519":             "PRIVATE KEY",
		".config/dsh-acp/credentials": "api_key = sk-secret",
		".config/other/settings":      "other-ok",
		".gitconfig":                  "gitconfig-ok",
		"state/cwd-1/s.jsonl":         "LOG LINE",
		"proj/f.txt":                  "project-ok",
		"proj/.aws-not/x":             "x",
	}
	for p, text := range files {
		full := filepath.Join(home, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proj := filepath.Join(home, "proj")
	// A hidden path inside the writable project is hidden there too.
	hidden := append(Secrets(filepath.Join(home, "state")), filepath.Join(proj, "inner-secret"))
	os.WriteFile(filepath.Join(proj, "inner-secret"), []byte("INNER"), 0o644)
	pol := Policy{Config: Config{Mode: WorkspaceWrite, Hidden: hidden}, Project: proj, TempDir: t.TempDir()}
	script := `for f in .ssh/id_ed25519 .config/dsh-acp/credentials state/cwd-1/s.jsonl proj/inner-secret; do cat "$HOME/$f" 2>/dev/null && echo "READ $f"; done
ls "$HOME/.ssh" >/dev/null && echo list-ok
cat "$HOME/.gitconfig" "$HOME/.config/other/settings" proj/f.txt 2>&1; echo
head -c 4 /usr/bin/env >/dev/null && echo usr-ok
echo new > proj/new.txt && cat proj/new.txt`
	out, ws := run(t, pol, home, script)
	if strings.Contains(out, "READ") || strings.Contains(out, "PRIVATE") || strings.Contains(out, "sk-secret") || strings.Contains(out, "LOG LINE") || strings.Contains(out, "INNER") {
		t.Errorf("a hidden path was read:\n%s", out)
	}
	for _, want := range []string{"list-ok", "gitconfig-okother-okproject-ok", "usr-ok", "new"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q (exit %v):\n%s", want, ws, out)
		}
	}
}
