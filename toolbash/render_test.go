package toolbash

import (
	"slices"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// TestResultTextReference pins the reference's result strings (§5.5).
func TestResultTextReference(t *testing.T) {
	cases := []struct {
		name string
		c    capture
		want string
	}{
		{"plain", capture{stdout: "hello\n"}, "hello\n"},
		{"nothing", capture{}, "(no output)"},
		{"stdout and stderr", capture{stdout: "out\n", stderr: "err\n"}, "out\n[stderr]\nerr\n"},
		{"stdout without newline", capture{stdout: "out", stderr: "err"}, "out\n[stderr]\nerr"},
		{"stderr only", capture{stderr: "err\n"}, "[stderr]\nerr\n"},
		{"exit 3", capture{stdout: "failing\n", exitCode: 3}, "failing\n[exit code: 3]"},
		{"timeout then kill", capture{timedOut: true, timeoutMs: 100, signal: "SIGTERM"}, "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"},
		{"timeout trapped", capture{stdout: "x", timedOut: true, timeoutMs: 1.5}, "x\n[timed out after 1.5ms]"},
		{"cut with spill", capture{stdout: "tail\n", stdoutCut: true, stdoutPath: "/tmp/a.log"}, "tail\n\n[output truncated; full output: /tmp/a.log]"},
		{"cut without spill", capture{stdout: "tail", stdoutCut: true, stderr: "e", stderrCut: true}, "tail\n[output truncated; full output: (unavailable)]\n[stderr]\ne\n[output truncated; full output: (unavailable)]"},
		{"invalid bytes", capture{stdout: "a\xffb"}, "a\uFFFDb"},
	}
	for _, c := range cases {
		if got := resultText(c.c); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestParseExitRoundTrip reads every rendered status back, and pins the
// spoof cases (§10 bash #9).
func TestParseExitRoundTrip(t *testing.T) {
	for _, c := range []capture{
		{stdout: "ok\n"}, {stdout: "x", exitCode: 3}, {exitCode: 255}, {signal: "SIGKILL"},
		{timedOut: true, timeoutMs: 5, signal: "SIGTERM"}, {timedOut: true, timeoutMs: 5, exitCode: 0},
		{stdout: "a", stderr: "b\n", exitCode: 1},
	} {
		code, sig := parseExit(resultText(c))
		if code != c.exitCode || sig != c.signal {
			t.Errorf("%+v: parsed (%d, %q)", c, code, sig)
		}
	}
	spoof := []struct {
		text string
		code int
		sig  string
	}{
		{"[exit code: 5]", 0, ""},              // no newline before: exit 0
		{"[killed by signal: SIGKILL]", 0, ""}, // same
		{"hi\n[exit code: 7]\n", 0, ""},        // not at the very end
		{"hi\n[exit code: 7]", 7, ""},          // the known residue
		{"x\n[exit code: 2]\n[exit code: 3]", 3, ""},
		{"x\n[killed by signal: SIGSEGV]", 0, "SIGSEGV"},
	}
	for _, s := range spoof {
		code, sig := parseExit(s.text)
		if code != s.code || sig != s.sig {
			t.Errorf("parseExit(%q) = (%d, %q), want (%d, %q)", s.text, code, sig, s.code, s.sig)
		}
	}
}

func TestConsoleFence(t *testing.T) {
	if got := tools.ConsoleFence("started background task bash-1\n"); got != "```console\nstarted background task bash-1\n```" {
		t.Errorf("got %q", got)
	}
	got := tools.ConsoleFence("a ```` b")
	if !strings.HasPrefix(got, "`````console\n") || !strings.HasSuffix(got, "\n`````") {
		t.Errorf("fence not longer than the backtick run: %q", got)
	}
}

func TestStatusLines(t *testing.T) {
	for _, c := range []struct {
		code   int
		sig    string
		killed bool
		want   string
	}{
		{0, "", false, "[status: completed, exit code: 0]"},
		{2, "", false, "[status: completed, exit code: 2]"},
		{0, "SIGTERM", true, "[status: killed by SIGTERM]"},
		{0, "", true, "[status: killed]"},
	} {
		if got := statusLine(c.code, c.sig, c.killed); got != c.want {
			t.Errorf("statusLine(%d, %q, %v) = %q, want %q", c.code, c.sig, c.killed, got, c.want)
		}
	}
}

// TestSplitResult: a result text is split into the command's output and
// the notes after it, exactly with the Meta renderResult gives, and read
// back from the text for a result logged without it.
func TestSplitResult(t *testing.T) {
	three := 3
	zero := 0
	cases := []struct {
		name         string
		c            capture
		output, note string
		code         *int
		sig          string
	}{
		{"plain", capture{stdout: "hello\n"}, "hello\n", "", &zero, ""},
		{"nothing", capture{}, "", "(no output)", &zero, ""},
		{"exit 3", capture{stdout: "failing\n", exitCode: 3}, "failing\n", "[exit code: 3]", &three, ""},
		{"no newline", capture{stdout: "failing", exitCode: 3}, "failing", "[exit code: 3]", &three, ""},
		{"both streams", capture{stdout: "out", stderr: "err\n", exitCode: 3}, "out\n[stderr]\nerr\n", "[exit code: 3]", &three, ""},
		{"timeout then kill", capture{timedOut: true, timeoutMs: 100, signal: "SIGTERM"}, "", "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]", nil, "SIGTERM"},
		{"cut", capture{stdout: "tail\n", stdoutCut: true, stdoutPath: "/tmp/a.log", exitCode: 3}, "tail\n\n[output truncated; full output: /tmp/a.log]", "[exit code: 3]", &three, ""},
		{"invalid bytes", capture{stdout: "a\xffb", exitCode: 3}, "a\uFFFDb", "[exit code: 3]", &three, ""},
		// A program that prints a marker as its last line: the Meta
		// tells it apart (the text alone cannot).
		{"spoof", capture{stdout: "x\n[exit code: 7]"}, "x\n[exit code: 7]", "", &zero, ""},
	}
	same := func(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	for _, c := range cases {
		text, n := renderResult(c.c)
		if text != resultText(c.c) {
			t.Fatalf("%s: renderResult and resultText differ", c.name)
		}
		out, note, code, sig := splitResult(text, newResultMeta(c.c, n))
		if out != c.output || note != c.note || !same(code, c.code) || sig != c.sig {
			t.Errorf("%s: split (%q, %q, %v, %q), want (%q, %q, %v, %q)", c.name, out, note, code, sig, c.output, c.note, c.code, c.sig)
		}
		if c.name == "spoof" || c.name == "no newline" {
			continue // the text alone is ambiguous
		}
		// Without the Meta: read back from the text.
		out, note, code, sig = splitResult(text, nil)
		if strings.TrimSuffix(out, "\n") != strings.TrimSuffix(c.output, "\n") || note != c.note || !same(code, c.code) || sig != c.sig {
			t.Errorf("%s without meta: split (%q, %q, %v, %q)", c.name, out, note, code, sig)
		}
	}
}

// TestPresentBashCards: the result card carries the output, the notes
// and the exit apart; a background call is titled with one line and
// shows a multi-line command whole in a sh fence.
func TestPresentBashCards(t *testing.T) {
	c := capture{stdout: "failing\n", exitCode: 3}
	text, n := renderResult(c)
	v := presentBashResult(bashArgs{Command: "make"}, tools.ResultInput{Content: []tools.Content{tools.Text(text)}, Meta: newResultMeta(c, n)})
	tr, ok := v.(tools.TerminalResult)
	if !ok || tr.Output != "failing\n" || tr.Notes != "[exit code: 3]" || tr.ExitCode == nil || *tr.ExitCode != 3 || tr.Signal != "" {
		t.Errorf("result view %+v", v)
	}
	// A refused or rejected call ran nothing: its reason is plain text,
	// not a console block of program output.
	rej := "Error: PermissionError: the user rejected this bash call; do not retry it unchanged, ask the user how to proceed"
	v = presentBashResult(bashArgs{Command: "make"}, tools.ResultInput{IsError: true, Content: []tools.Content{tools.Text(rej)}})
	if g, ok := v.(tools.GenericResult); !ok || len(g.Content) != 1 || g.Content[0].Text != rej {
		t.Errorf("rejected call's result view %+v", v)
	}
	call := presentBashCall(bashArgs{Command: "git status\nrm -f x.txt", Description: "Clean up", RunInBackground: true})
	g, ok := call.(tools.GenericCall)
	if !ok || g.Title != "git status…" || len(g.Content) != 2 || g.Content[1].Text != "```sh\ngit status\nrm -f x.txt\n```" {
		t.Errorf("background call view %+v", call)
	}
	call = presentBashCall(bashArgs{Command: "npm start", Description: "Serve", RunInBackground: true})
	if g, ok := call.(tools.GenericCall); !ok || g.Title != "npm start" || len(g.Content) != 1 {
		t.Errorf("one-line background call view %+v", call)
	}
}

func TestCutPaths(t *testing.T) {
	for _, c := range []struct {
		out   string
		cut   bool
		paths []string
	}{
		{"plain\n", false, nil},
		{"a\n[output truncated; full output: /t/out.log]\n[stderr]\nb\n[output truncated; full output: /t/err.log]", true, []string{"/t/out.log", "/t/err.log"}},
		{"a\n[output truncated; full output: (unavailable)]", true, nil},
	} {
		cut, paths := cutPaths(c.out)
		if cut != c.cut || !slices.Equal(paths, c.paths) {
			t.Errorf("cutPaths(%q) = %v %q, want %v %q", c.out, cut, paths, c.cut, c.paths)
		}
	}
}
