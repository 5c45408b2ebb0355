package diffcmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// run calls Run on two files holding before and after, named as given
// inside a temp dir, from that dir (so the paths print as given).
func run(t *testing.T, before, after string) (out, errOut string, code int) {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "old.txt"), before)
	write(t, filepath.Join(dir, "new.txt"), after)
	t.Chdir(dir)
	var o, e bytes.Buffer
	code = Run([]string{"old.txt", "new.txt"}, &o, &e)
	return o.String(), e.String(), code
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRunOutput(t *testing.T) {
	out, errOut, code := run(t, "a\nb\nc\nd\ne\n", "a\nb\nC\nd\ne")
	want := "--- old.txt\n+++ new.txt\n@@ -1,5 +1,5 @@\n a\n b\n-c\n+C\n d\n-e\n+e\n\\ No newline at end of file\n"
	if out != want || errOut != "" || code != 1 {
		t.Fatalf("got %q %q %d, want %q", out, errOut, code, want)
	}
	// Hunk headers: ",1" left out, "-0,0" for an empty side.
	out, _, code = run(t, "", "x\n")
	if want := "--- old.txt\n+++ new.txt\n@@ -0,0 +1 @@\n+x\n"; out != want || code != 1 {
		t.Fatalf("empty to x: %q %d", out, code)
	}
	out, _, _ = run(t, "x\n", "")
	if want := "--- old.txt\n+++ new.txt\n@@ -1 +0,0 @@\n-x\n"; out != want {
		t.Fatalf("x to empty: %q", out)
	}
}

func TestRunNoHunks(t *testing.T) {
	for _, c := range []struct{ name, a, b string }{
		{"equal", "a\nb\n", "a\nb\n"},
		{"both empty", "", ""},
		{"CRLF twin", "a\r\nb\r\n", "a\nb\n"},
		{"equal binary", "\x00\x01", "\x00\x01"},
	} {
		out, errOut, code := run(t, c.a, c.b)
		if out != "" || errOut != "" || code != 0 {
			t.Errorf("%s: got %q %q %d, want no output and 0", c.name, out, errOut, code)
		}
	}
}

func TestRunBinary(t *testing.T) {
	for _, c := range []struct{ name, a, b string }{
		{"NUL", "a\x00\n", "a\n"},
		{"non-UTF-8", "a\n", "caf\xe9\n"},
	} {
		out, errOut, code := run(t, c.a, c.b)
		if want := "Binary files old.txt and new.txt differ\n"; out != want || errOut != "" || code != 1 {
			t.Errorf("%s: got %q %q %d, want %q and 1", c.name, out, errOut, code, want)
		}
	}
}

func TestRunErrors(t *testing.T) {
	var o, e bytes.Buffer
	if code := Run([]string{"only-one"}, &o, &e); code != 2 || o.Len() != 0 || !strings.Contains(e.String(), Usage) {
		t.Fatalf("one arg: %d %q %q", code, o.String(), e.String())
	}
	o.Reset()
	e.Reset()
	if code := Run(nil, &o, &e); code != 2 || !strings.Contains(e.String(), Usage) {
		t.Fatalf("no args: %d %q", code, e.String())
	}
	dir := t.TempDir()
	present := filepath.Join(dir, "present")
	write(t, present, "x\n")
	missing := filepath.Join(dir, "missing")
	for _, args := range [][]string{{missing, present}, {present, missing}, {present, dir}} {
		o.Reset()
		e.Reset()
		code := Run(args, &o, &e)
		if code != 2 || o.Len() != 0 || !strings.HasPrefix(e.String(), "dsh-acp diff: ") {
			t.Errorf("%v: %d %q %q", args, code, o.String(), e.String())
		}
	}
	// A failing writer gives exit 2.
	e.Reset()
	if code := Run([]string{present, filepath.Join("testdata", "absent")}, failWriter{}, &e); code != 2 {
		t.Errorf("missing file with failing stdout: %d", code)
	}
	other := filepath.Join(dir, "other")
	write(t, other, "y\n")
	e.Reset()
	if code := Run([]string{present, other}, failWriter{}, &e); code != 2 || !strings.Contains(e.String(), "write") {
		t.Errorf("failing stdout: %d %q", code, e.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

// gnuDiff returns the path of GNU diff, or skips the test.
func gnuDiff(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("GNU diff not installed")
	}
	v, err := exec.Command(p, "--version").Output()
	if err != nil || !bytes.Contains(v, []byte("GNU diffutils")) {
		t.Skip("diff is not GNU diff")
	}
	return p
}

// TestRunMatchesGNU compares Run's output byte for byte with GNU
// `diff -U3 --minimal` (labels instead of timestamps) on inputs whose
// shortest script is unique, and checks that GNU patch applies it.
func TestRunMatchesGNU(t *testing.T) {
	diff := gnuDiff(t)
	lines := func(n int, edit func(i int) string) string {
		var sb strings.Builder
		for i := 1; i <= n; i++ {
			sb.WriteString(edit(i))
		}
		return sb.String()
	}
	base := lines(40, func(i int) string { return "line " + strconv.Itoa(i) + "\n" })
	cases := []struct{ name, a, b string }{
		{"one change", base, strings.Replace(base, "line 20\n", "line twenty\n", 1)},
		{"two hunks", base, strings.NewReplacer("line 3\n", "THREE\n", "line 30\n", "").Replace(base)},
		{"merged by a gap of 6", base, strings.NewReplacer("line 10\n", "ten\n", "line 17\n", "seventeen\n").Replace(base)},
		{"split by a gap of 7", base, strings.NewReplacer("line 10\n", "ten\n", "line 18\n", "eighteen\n").Replace(base)},
		{"insert at top", base, "new first\n" + base},
		{"append", base, base + "new last\n"},
		{"final newline added", "a\nb", "a\nb\n"},
		{"final newline removed", "a\nb\n", "a\nb"},
		{"no final newline on either side", "a\nx", "a\ny"},
		{"empty to content", "", "one\ntwo\n"},
		{"content to empty", "one\ntwo\n", ""},
		{"blank context lines", "\n\nx\n\n\n", "\n\ny\n\n\n"},
		{"whole rewrite", "a\nb\nc\n", "d\ne\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := run(t, c.a, c.b)
			cmd := exec.Command(diff, "-U3", "--minimal", "--label", "old.txt", "--label", "new.txt", "old.txt", "new.txt")
			want, err := cmd.Output()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatal(err)
			}
			if out != string(want) || code != cmd.ProcessState.ExitCode() || errOut != "" {
				t.Fatalf("got (exit %d)\n%s\nGNU diff (exit %d)\n%s", code, out, cmd.ProcessState.ExitCode(), want)
			}
			patchApplies(t, out, c.b)
		})
	}
}

// patchApplies checks with GNU patch, when installed, that the diff in the
// current dir turns old.txt into want.
func patchApplies(t *testing.T, diff, want string) {
	t.Helper()
	p, err := exec.LookPath("patch")
	if err != nil {
		return
	}
	cmd := exec.Command(p, "-s", "-o", "patched.txt", "old.txt")
	cmd.Stdin = strings.NewReader(diff)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch: %v: %s", err, msg)
	}
	got, err := os.ReadFile("patched.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("patched file %q, want %q", got, want)
	}
}
