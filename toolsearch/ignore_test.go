package toolsearch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// writeTree writes files (path -> content) under root.
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// walkList returns the files a walk of root (cwd: cwd) visits, relative
// to root, sorted.
func walkList(t *testing.T, root, cwd string) []string {
	t.Helper()
	var (
		mu  sync.Mutex
		out []string
	)
	w := newWalk(root, root, cwd)
	if err := w.run(context.Background(), func(_, rel string) error {
		mu.Lock()
		out = append(out, rel)
		mu.Unlock()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// ignoreCases is a tree of git's ignore rules at several levels, with the
// corner cases of gitignore(5).
var ignoreCases = map[string]string{
	".gitignore": "# a comment\n" +
		"*.log\n" +
		"!keep.log\n" +
		"/root-only.txt\n" +
		"build/\n" +
		"doc/*.html\n" +
		"**/cache\n" +
		"logs/**\n" +
		"!logs/important\n" +
		"\\#hash.txt\n" +
		"trailing.txt   \n" +
		"space\\ \n" +
		"[!a]x.dat\n" +
		"*.txt\n" +
		"!*.keep.txt\n" +
		"!keep\n" +
		"{a,b}.brace\n" +
		"a/**/deep.txt\n" +
		"unclosed[\n",
	".git/info/exclude": "secret.txt\n!shown.secret\n",
	"root-only.txt":     "x", "sub/root-only.txt": "x",
	"a.log": "x", "keep.log": "x", "sub/b.log": "x",
	"build/out.go": "x", "sub/build/out.go": "x", "build.go": "x",
	"doc/index.html": "x", "doc/sub/page.html": "x", "sub/doc/index.html": "x",
	"cache/x.go": "x", "sub/deep/cache/y.go": "x",
	"logs/a.go": "x", "logs/important": "x", "logs/nested/b.go": "x",
	"#hash.txt": "x", "trailing.txt": "x", "space ": "x",
	"bx.dat": "x", "ax.dat": "x",
	"notes.txt": "x", "notes.keep.txt": "x",
	// "!keep" re-includes folders named keep, not the .txt files in them
	// (a name rule matches the last element only).
	"keep/a.txt": "x", "keep/main.go": "x",
	"{a,b}.brace": "x", "a.brace": "x",
	"a/deep.txt": "x", "a/x/y/deep.txt": "x",
	"secret.txt": "x", "sub/secret.txt": "x",
	"unclosed[":      "x",
	"src/.gitignore": "*.go\n!main.go\n/gen/\ntmp.*\n",
	"src/main.go":    "x", "src/util.go": "x", "src/gen/a.c": "x", "src/deeper/gen/b.c": "x",
	"src/tmp.c": "x", "src/deeper/tmp.h": "x", "src/deeper/x.go": "x",
	"src/deeper/.gitignore": "!x.go\n",
	"ok.go":                 "x", "sub/ok.go": "x",
}

// TestIgnoreMatchesGit: the walk sees exactly the files git does not
// ignore (`git ls-files --others --exclude-standard`), for nested
// .gitignore files, .git/info/exclude and gitignore(5)'s corner cases.
func TestIgnoreMatchesGit(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is needed for this test")
		}
		t.Skip("git not installed")
	}
	root := t.TempDir()
	cmd := exec.Command(gitBin, "init", "-q", root)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	writeTree(t, root, ignoreCases)
	cmd = exec.Command(gitBin, "-C", root, "-c", "core.excludesFile=/dev/null", "ls-files", "--others", "--exclude-standard", "-z")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	want := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	sort.Strings(want)
	got := walkList(t, root, root)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("walk saw\n  %s\ngit shows\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if len(want) < 15 {
		t.Fatalf("only %d files visible: the fixture is broken", len(want))
	}
}

// TestIgnoreWithoutGit: outside a git repository .gitignore and .ignore
// still apply at every level (.ignore beating .gitignore in one folder),
// and searching a subfolder applies the ignore files above it up to the
// session cwd.
func TestIgnoreWithoutGit(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".gitignore":          "*.tmp\nvendor/\n",
		".ignore":             "!wanted.tmp\n",
		"a.tmp":               "x",
		"wanted.tmp":          "x",
		"vendor/v.go":         "x",
		"src/vendor/w.go":     "x",
		"src/x.go":            "x",
		"src/y.tmp":           "x",
		"src/pkg/.ignore":     "*.go\n",
		"src/pkg/.gitignore":  "!*.go\n",
		"src/pkg/p.go":        "x",
		"src/pkg/readme.md":   "x",
		"src/pkg/.hidden.txt": "x",
	})
	got := strings.Join(walkList(t, root, root), " ")
	want := ".gitignore .ignore src/pkg/.gitignore src/pkg/.hidden.txt src/pkg/.ignore src/pkg/readme.md src/x.go wanted.tmp"
	if got != want {
		t.Errorf("walk saw %s\nwant      %s", got, want)
	}
	// From src, the root's rules still hold.
	got = strings.Join(walkList(t, filepath.Join(root, "src"), root), " ")
	if want := "pkg/.gitignore pkg/.hidden.txt pkg/.ignore pkg/readme.md x.go"; got != want {
		t.Errorf("walk of src saw %s\nwant %s", got, want)
	}
}

// TestParseRule: the pieces of one line.
func TestParseRule(t *testing.T) {
	for _, c := range []struct {
		line string
		want rule
		ok   bool
	}{
		{"", rule{}, false},
		{"# x", rule{}, false},
		{"   ", rule{}, false},
		{"/", rule{}, false},
		{"*.go", rule{glob: "*.go", nameOnly: true}, true},
		{"!keep", rule{glob: "keep", literal: true, negate: true, nameOnly: true}, true},
		{"build/", rule{glob: "build", literal: true, dirOnly: true, nameOnly: true}, true},
		{"/top", rule{glob: "top", literal: true}, true},
		{"a/b", rule{glob: "a/b", literal: true}, true},
		{"a/**", rule{glob: "a/**/*"}, true},
		{`\#x`, rule{glob: `\#x`, nameOnly: true}, true},
		{"x  ", rule{glob: "x", literal: true, nameOnly: true}, true},
		{`x\ `, rule{glob: `x\ `, nameOnly: true}, true},
		{"{a}", rule{glob: `\{a\}`, nameOnly: true}, true},
		{"[ab", rule{}, false},
	} {
		got, ok := parseRule(c.line)
		if ok != c.ok || got != c.want {
			t.Errorf("parseRule(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
	if rs := parseIgnore([]byte("\xef\xbb\xbfa\r\nb\n\n#c")); len(rs) != 2 || rs[0].glob != "a" || rs[1].glob != "b" {
		t.Errorf("BOM and CRLF: %+v", rs)
	}
}
