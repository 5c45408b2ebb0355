package main

import (
	"regexp"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// probeLine matches the line the shell tools log once the sandbox probe
// has run: the sandbox's state, or the warning that commands run
// unconfined (not the session notice's log line).
var probeLine = regexp.MustCompile(`(?m)msg="(bash: commands run through the sandbox helper|shell commands run without a sandbox)`)

// TestProbeWaitsForACommand: the agent starts no sandbox probe for
// initialize and session/new (the process ends without having probed),
// and probes once for a turn that runs two commands.
func TestProbeWaitsForACommand(t *testing.T) {
	p := startProc(t, "--log-level", "info")
	p.send(t, initLine)
	p.next(t)
	p.newSession(t, 2, t.TempDir(), `[]`)
	_ = p.stdin.Close()
	for range p.lines { // the session's updates
	}
	p.wait(t)
	if n := len(probeLine.FindAllString(p.stderr.String(), -1)); n != 0 {
		t.Errorf("initialize and session/new probed the sandbox (%d log lines):\n%s", n, p.stderr)
	}

	rec := e2etest.Replay(t, e2etest.ToolCalls(
		bashCall(map[string]any{"command": "echo one", "description": "One"}),
		bashCall(map[string]any{"command": "echo two", "description": "Two"}),
	))
	p = startProc(t, "--log-level", "info", "--replay", rec, "--mode", "bypassPermissions")
	p.send(t, initLine)
	p.next(t)
	sid, _ := p.newSession(t, 2, t.TempDir(), `[]`)
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"go"}]}}`)
	ls := p.answer(t, 3)
	_ = p.stdin.Close()
	for range p.lines {
	}
	p.wait(t)
	ran := 0
	for _, l := range ls {
		if regexp.MustCompile(`"status":"completed"`).Match(l) && regexp.MustCompile(`(one|two)\\n`).Match(l) {
			ran++
		}
	}
	if ran < 2 {
		t.Errorf("the two commands did not both complete:\n%s", ls)
	}
	if n := len(probeLine.FindAllString(p.stderr.String(), -1)); n != 1 {
		t.Errorf("%d probe log lines for a turn of two commands, want 1:\n%s", n, p.stderr)
	}
}
