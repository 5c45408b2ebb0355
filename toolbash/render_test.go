package toolbash

import (
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
