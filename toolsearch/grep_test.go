package toolsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/internal/gentree"
	"github.com/dsh-acp/dsh-acp/tools"
)

// run calls tool with args (a JSON object) in a session whose cwd is cwd.
func run(t testing.TB, tool tools.Tool, cwd string, args any) (string, resultMeta, error) {
	t.Helper()
	return runCtx(context.Background(), t, tool, cwd, args)
}

func runCtx(ctx context.Context, t testing.TB, tool tools.Tool, cwd string, args any) (string, resultMeta, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tool.Execute(ctx, &tools.Exec{Name: tool.Name, Args: raw, Session: tools.NewSession("s", cwd)})
	if err != nil {
		return "", resultMeta{}, err
	}
	var m resultMeta
	if out.Meta != nil {
		if err := json.Unmarshal(out.Meta, &m); err != nil {
			t.Fatal(err)
		}
	}
	text := tools.JoinText(out.Content)
	if !utf8.ValidString(text) {
		t.Errorf("output is not UTF-8: %q", text)
	}
	return text, m, nil
}

type obj = map[string]any

// generated is a gentree tree shared by the tests of a run.
func generated(t *testing.T, files int) (string, gentree.Manifest) {
	t.Helper()
	root := t.TempDir()
	m, err := gentree.Generate(root, gentree.Options{Files: files, Seed: 3, NeedleEvery: 7, MeanLines: 12})
	if err != nil {
		t.Fatal(err)
	}
	return root, m
}

// sortedPaths sorts rel paths the way the output does.
func sortedPaths(ps []string) []string {
	sort.Slice(ps, func(i, j int) bool { return pathLess(ps[i], ps[j]) })
	return ps
}

// TestGrepGeneratedTree: on a tree with nested .gitignore and .ignore
// files, .git/info/exclude, binary files holding the needle and ignored
// files holding it, grep reports exactly the visible text files that hold
// it, on the right lines, in every output mode.
func TestGrepGeneratedTree(t *testing.T) {
	root, m := generated(t, 3000)
	var wantFiles, wantLines []string
	total := 0
	for _, f := range m.Visible() {
		if len(f.NeedleLines) == 0 {
			continue
		}
		wantFiles = append(wantFiles, f.Rel)
		total += len(f.NeedleLines)
	}
	wantFiles = sortedPaths(wantFiles)
	byRel := map[string]gentree.File{}
	for _, f := range m.Files {
		byRel[f.Rel] = f
	}
	for _, p := range wantFiles {
		for _, n := range byRel[p].NeedleLines {
			wantLines = append(wantLines, p+":"+strconv.Itoa(n))
		}
	}
	if len(wantFiles) < 50 {
		t.Fatalf("only %d needle files: the generator changed", len(wantFiles))
	}

	text, meta, err := run(t, Grep(), root, obj{"pattern": "needle", "head_limit": MaxHeadLimit})
	if err != nil {
		t.Fatal(err)
	}
	want := "Found " + strconv.Itoa(len(wantFiles)) + " files\n" + strings.Join(wantFiles, "\n")
	if text != want {
		t.Errorf("files_with_matches:\n%.600s\nwant\n%.600s", text, want)
	}
	if len(meta.Locations) != MaxLocations || meta.Locations[0].Path != filepath.Join(root, wantFiles[0]) ||
		meta.Locations[0].Line != byRel[wantFiles[0]].NeedleLines[0] {
		t.Errorf("locations %+v", meta.Locations[:min(3, len(meta.Locations))])
	}

	text, _, err = run(t, Grep(), root, obj{"pattern": `//\s+needle\b`, "output_mode": "content", "head_limit": MaxHeadLimit})
	if err != nil {
		t.Fatal(err)
	}
	var gotLines []string
	for _, l := range strings.Split(text, "\n") {
		p, rest, _ := strings.Cut(l, ":")
		n, _, _ := strings.Cut(rest, ":")
		gotLines = append(gotLines, p+":"+n)
		if !strings.Contains(l, "// needle here") {
			t.Fatalf("content line %q", l)
		}
	}
	if strings.Join(gotLines, " ") != strings.Join(wantLines, " ") {
		t.Errorf("content lines differ: got %d, want %d\n%.400s\n%.400s", len(gotLines), len(wantLines), gotLines, wantLines)
	}

	text, _, err = run(t, Grep(), root, obj{"pattern": "NEEDLE", "ignore_case": true, "output_mode": "count", "head_limit": 3})
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("Found %d matching lines in %d files\n", total, len(wantFiles))
	for _, p := range wantFiles[:3] {
		head += p + ":" + strconv.Itoa(len(byRel[p].NeedleLines)) + "\n"
	}
	head += fmt.Sprintf("\n(Showing the first 3 of %d files.", len(wantFiles))
	if !strings.HasPrefix(text, head) {
		t.Errorf("count:\n%s\nwant it to start with\n%s", text, head)
	}
}

// TestGrep100kFiles: a tree of 100,000 files is searched whole: every
// needle file is counted, the listing is cut at head_limit with the exact
// total, and glob finds every binary file.
func TestGrep100kFiles(t *testing.T) {
	root := memTempDir(t)
	t0 := time.Now()
	m, err := gentree.Generate(root, gentree.Options{Files: 100_000, Seed: 5, MeanLines: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("generated in %v", time.Since(t0))
	defer func(t0 time.Time) { t.Logf("searched in %v", time.Since(t0)) }(time.Now())
	needles, binaries := 0, 0
	for _, f := range m.Files {
		if len(f.NeedleLines) > 0 && !f.Ignored {
			needles++
		}
		if f.Binary {
			binaries++
		}
	}
	text, _, err := run(t, Grep(), root, obj{"pattern": "needle", "head_limit": 100})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, fmt.Sprintf("Found %d files\n", needles)) ||
		!strings.HasSuffix(text, fmt.Sprintf("(Showing the first 100 of %d files. Narrow the search with path, glob or a more specific pattern, or raise head_limit.)", needles)) ||
		strings.Count(text, "\n") != 102 {
		t.Errorf("grep over 100k files:\n%.300s\n…\n%s", text, text[max(0, len(text)-300):])
	}
	text, _, err = run(t, Glob(), root, obj{"pattern": "**/*.bin"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, fmt.Sprintf("Found %d files\n", binaries)) || strings.Count(text, ".bin") != DefaultHeadLimit {
		t.Errorf("glob over 100k files:\n%.300s", text)
	}
}

// memTempDir is a temporary folder in memory (/dev/shm) when the machine
// has one, else t.TempDir(): making and removing 100,000 files on a disk
// costs a minute on a loaded machine.
func memTempDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "toolsearch-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// TestGrepLinksAndNames: a symbolic link loop ends, a link to a folder
// inside is followed, a link leading outside is not (and is noted), a
// dangling link is passed over; a file name and a text that are not
// UTF-8 are shown with \xNN escapes, and such a file gets no location.
func TestGrepLinksAndNames(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "proj")
	outside := filepath.Join(base, "outside")
	writeTree(t, root, map[string]string{
		"a/one.txt":   "needle one\n",
		"b/two.txt":   "needle two\n",
		"ok.txt":      "plain\n",
		"latin1.txt":  "d\xe9j\xe0 needle\n",
		"caf\xe9.txt": "needle in a latin-1 name\n",
		"ctrl\x01.md": "needle\x1b[31m red\n",
	})
	writeTree(t, outside, map[string]string{"secret.txt": "needle outside\n"})
	for link, target := range map[string]string{
		"a/loop":     "..",           // a loop back to root
		"a/self":     ".",            // a loop to its own folder
		"b/to-a":     "../a",         // inside: followed
		"out":        outside,        // outside: not followed
		"dangling":   "nowhere",      // passed over
		"b/file.lnk": "two.txt",      // a link to a file inside
		"sec.lnk":    outside + "/x", // a file link leading outside (dangling too)
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	var (
		text string
		meta resultMeta
		err  error
	)
	go func() {
		defer close(done)
		text, meta, err = run(t, Grep(), root, obj{"pattern": "needle", "output_mode": "content"})
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("grep did not end: a link loop?")
	}
	if err != nil {
		t.Fatal(err)
	}
	want := "a/one.txt:1:needle one\n" +
		"b/file.lnk:1:needle two\n" +
		"b/to-a/one.txt:1:needle one\n" +
		"b/two.txt:1:needle two\n" +
		"caf\\xe9.txt:1:needle in a latin-1 name\n" +
		"ctrl\\x01.md:1:needle\\x1b[31m red\n" +
		"latin1.txt:1:d\\xe9j\\xe0 needle\n" +
		"\n(Did not follow 1 symbolic link leading outside the searched folder and the working directory.)"
	if text != want {
		t.Errorf("grep:\n%s\nwant\n%s", text, want)
	}
	for _, l := range meta.Locations {
		if !utf8.ValidString(l.Path) || !filepath.IsAbs(l.Path) {
			t.Errorf("location %q", l.Path)
		}
	}
	if len(meta.Locations) != 6 {
		t.Errorf("%d locations, want 6 (all but the non-UTF-8 name): %+v", len(meta.Locations), meta.Locations)
	}
}

// TestGrepOptions: globs on names and paths, a file as path, context
// with separators, long lines, head_limit in content mode, and the
// errors.
func TestGrepOptions(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("x", 2000) + " needle " + strings.Repeat("y", 2000)
	writeTree(t, root, map[string]string{
		"src/a.go":      "package a\n\nfunc Needle() {}\nvar x = 1\nvar y = 2\nvar z = 3\nfunc needle2() {}\n",
		"src/b_test.go": "package a\n// needle\n",
		"src/c.ts":      "// needle\n",
		"docs/n.md":     "needle\n",
		"min.js":        long + "\n",
	})
	cases := []struct {
		name string
		args obj
		want string
	}{
		{"name glob", obj{"pattern": "needle", "glob": "*.go", "ignore_case": true},
			"Found 2 files\nsrc/a.go\nsrc/b_test.go"},
		{"brace glob", obj{"pattern": "needle", "glob": "*.{ts,md}"},
			"Found 2 files\ndocs/n.md\nsrc/c.ts"},
		{"path glob", obj{"pattern": "needle", "glob": "src/**/*_test.go"},
			"Found 1 file\nsrc/b_test.go"},
		{"path is a file", obj{"pattern": "needle", "path": "src/c.ts", "glob": "*.go", "output_mode": "content"},
			"src/c.ts:1:// needle"},
		{"context", obj{"pattern": "(?i)needle", "path": "src/a.go", "output_mode": "content", "context": 1},
			"src/a.go-2-\nsrc/a.go:3:func Needle() {}\nsrc/a.go-4-var x = 1\n--\nsrc/a.go-6-var z = 3\nsrc/a.go:7:func needle2() {}"},
		{"context between files", obj{"pattern": "needle", "path": "src", "glob": "*.{go,ts}", "output_mode": "content", "context": 1},
			"src/a.go-6-var z = 3\nsrc/a.go:7:func needle2() {}\n--\nsrc/b_test.go-1-package a\nsrc/b_test.go:2:// needle\n--\nsrc/c.ts:1:// needle"},
		{"head_limit lines", obj{"pattern": "needle", "output_mode": "content", "head_limit": 2, "ignore_case": true},
			// A window of 500 bytes from 100 before the match.
			"docs/n.md:1:needle\nmin.js:1:…" + long[2001-MaxLineBytes/5:2001-MaxLineBytes/5+MaxLineBytes] + "…\n\n" +
				"(Showing the first 2 lines; more lines matched, in 5 files in all. Narrow the search with path, glob or a more specific pattern, or raise head_limit.)"},
		{"none", obj{"pattern": "absent"}, "No files found"},
		{"none content", obj{"pattern": "absent", "output_mode": "content"}, "No matches found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, _, err := run(t, Grep(), root, c.args)
			if err != nil {
				t.Fatal(err)
			}
			if text != c.want {
				t.Errorf("got\n%s\nwant\n%s", text, c.want)
			}
		})
	}
	for _, c := range []struct {
		args obj
		code string
		msg  string
	}{
		{obj{"pattern": ""}, "INVALID_ARGS", "pattern must be a non-empty string"},
		{obj{"pattern": "a(?=b)"}, "SEARCH_BAD_PATTERN", "invalid regular expression (RE2 syntax): invalid or unsupported Perl syntax: `(?=`"},
		{obj{"pattern": "a", "head_limit": 0}, "INVALID_ARGS", "head_limit must be an integer from 1 to 5000"},
		{obj{"pattern": "a", "context": 1.5}, "INVALID_ARGS", "context must be an integer from 0 to 50"},
		{obj{"pattern": "a", "output_mode": "lines"}, "INVALID_ARGS", "output_mode"},
		{obj{"pattern": "a", "glob": "[x"}, "INVALID_ARGS", `glob "[x" is not a valid pattern`},
		{obj{"pattern": "a", "path": "nope"}, "SEARCH_NOT_FOUND", "does not exist"},
	} {
		_, _, err := run(t, Grep(), root, c.args)
		var te *tools.Error
		var ae *tools.ArgsError
		switch {
		case errors.As(err, &te):
			if te.Code != c.code || !strings.Contains(te.Message, c.msg) {
				t.Errorf("%v: %s %q, want %s %q", c.args, te.Code, te.Message, c.code, c.msg)
			}
		case errors.As(err, &ae):
			if c.code != "INVALID_ARGS" || !strings.Contains(ae.Error(), c.msg) {
				t.Errorf("%v: %v, want %s %q", c.args, ae, c.code, c.msg)
			}
		default:
			t.Errorf("%v: error %v, want %s", c.args, err, c.code)
		}
	}
}

// TestGrepCancel: a cancelled search ends with SEARCH_ABORTED.
func TestGrepCancel(t *testing.T) {
	root, _ := generated(t, 500)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := runCtx(ctx, t, Grep(), root, obj{"pattern": "needle"})
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != "SEARCH_ABORTED" {
		t.Errorf("cancelled grep: %v", err)
	}
}

// TestGlob: newest first, ignore rules, a literal folder prefix, the
// limit note, and patterns that would leave path.
func TestGlob(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".gitignore":      "dist/\n",
		"src/old.go":      "",
		"src/new.go":      "",
		"src/mid.go":      "",
		"src/x/deep.go":   "",
		"src/readme.md":   "",
		"dist/bundle.go":  "",
		"top.go":          "",
		"src/.hidden.go":  "",
		"other/other.txt": "",
	})
	now := time.Now()
	for i, p := range []string{"src/old.go", "src/mid.go", "src/x/deep.go", "src/new.go", "top.go", "src/.hidden.go"} {
		ts := now.Add(time.Duration(i-10) * time.Hour)
		if err := os.Chtimes(filepath.Join(root, p), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args obj
		want string
	}{
		{obj{"pattern": "**/*.go"}, "Found 6 files\nsrc/.hidden.go\ntop.go\nsrc/new.go\nsrc/x/deep.go\nsrc/mid.go\nsrc/old.go"},
		{obj{"pattern": "*.go"}, "Found 1 file\ntop.go"},
		{obj{"pattern": "src/*.go"}, "Found 4 files\nsrc/.hidden.go\nsrc/new.go\nsrc/mid.go\nsrc/old.go"},
		{obj{"pattern": "*.go", "path": "src/x"}, "Found 1 file\nsrc/x/deep.go"},
		{obj{"pattern": "dist/**"}, "No files found"},
		{obj{"pattern": "nothere/**/*.go"}, "No files found"},
	} {
		text, meta, err := run(t, Glob(), root, c.args)
		if err != nil {
			t.Fatal(err)
		}
		if text != c.want {
			t.Errorf("%v:\n%s\nwant\n%s", c.args, text, c.want)
		}
		if strings.HasPrefix(text, "Found") && (len(meta.Locations) == 0 || !filepath.IsAbs(meta.Locations[0].Path) || meta.Locations[0].Line != 0) {
			t.Errorf("%v: locations %+v", c.args, meta.Locations)
		}
	}
	for _, p := range []string{"", "../*", "/etc/*", "a/../../b", "[x"} {
		if _, _, err := run(t, Glob(), root, obj{"pattern": p}); err == nil {
			t.Errorf("pattern %q accepted", p)
		}
	}
	// The limit.
	many := map[string]string{}
	for i := 0; i < DefaultHeadLimit+5; i++ {
		many[fmt.Sprintf("many/f%03d.txt", i)] = ""
	}
	writeTree(t, root, many)
	text, _, err := run(t, Glob(), root, obj{"pattern": "many/*.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, fmt.Sprintf("Found %d files\n", DefaultHeadLimit+5)) ||
		!strings.HasSuffix(text, fmt.Sprintf("(Showing the %d most recently modified of %d files. Narrow the pattern or the path.)", DefaultHeadLimit, DefaultHeadLimit+5)) {
		t.Errorf("limit:\n%.200s…%s", text, text[len(text)-200:])
	}
}

// TestCards: titles are Markdown-safe, kind search; a result card shows
// the text in a code block and links the files.
func TestCards(t *testing.T) {
	for _, c := range []struct {
		tool tools.Tool
		args string
		want string
	}{
		{Grep(), `{"pattern":"TODO"}`, "grep TODO"},
		{Grep(), `{"pattern":"func (\\w+)","path":"src/my_pkg","glob":"*.go","ignore_case":true}`, "grep -i `func (\\w+)` in `src/my_pkg` (`*.go`)"},
		{Grep(), "{\"pattern\":\"a`b\"}", "grep ``a`b``"},
		{Glob(), `{"pattern":"**/*.ts","path":"web"}`, "glob `**/*.ts` in web"},
	} {
		v, ok := c.tool.CallView([]byte(c.args)).(tools.GenericCall)
		if !ok || v.Title != c.want || v.Kind != tools.KindSearch {
			t.Errorf("%s %s: %+v, want title %q", c.tool.Name, c.args, v, c.want)
		}
	}
	meta := resultMeta{Locations: []tools.FileLocation{{Path: "/p/a.go", Line: 3}}}.marshal()
	r, ok := Grep().ResultView([]byte(`{"pattern":"x"}`), tools.ResultInput{Content: []tools.Content{tools.Text("Found 1 file\na_b.go")}, Meta: meta}).(tools.GenericResult)
	if !ok || len(r.Content) != 1 || r.Content[0].Text != "```\nFound 1 file\na_b.go\n```" || len(r.Locations) != 1 || r.Locations[0] != (tools.FileLocation{Path: "/p/a.go", Line: 3}) {
		t.Errorf("result card %+v", r)
	}
	if v := Grep().ResultView([]byte(`{"pattern":"x"}`), tools.ResultInput{IsError: true, Content: []tools.Content{tools.Text("Error: x")}}); v != nil {
		t.Errorf("error result card %+v, want the fallback", v)
	}
}

// BenchmarkGrepTree: one grep call (the tool's Execute: walk, ignore
// rules, search, output) over a generated tree of 10,000 files, for a
// literal, a regular expression with a required literal, and a
// case-insensitive search.
func BenchmarkGrepTree(b *testing.B) {
	root := b.TempDir()
	if _, err := gentree.Generate(root, gentree.Options{Files: 10_000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args obj
	}{
		{"literal", obj{"pattern": "needle", "output_mode": "content"}},
		{"regex", obj{"pattern": `^\s*// ne+dle`, "output_mode": "content"}},
		{"ignore_case", obj{"pattern": "NEEDLE", "ignore_case": true, "output_mode": "content"}},
		{"files", obj{"pattern": "needle"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := run(b, Grep(), root, c.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
