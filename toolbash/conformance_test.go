package toolbash

import (
	"encoding/json"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/tools/toolstest"
)

// TestConformance runs the tools contract checks on bash, bash_output and
// bash_kill, with their typical arguments and results (a foreground
// result with its Meta, one ended by a signal, one logged before the Meta
// existed, a background start, an error).
func TestConformance(t *testing.T) {
	m := New(Options{TempDir: t.TempDir()})
	t.Cleanup(m.Shutdown)
	zero := 0
	fg, _ := json.Marshal(resultMeta{Output: 6, ExitCode: &zero})
	sig, _ := json.Marshal(resultMeta{Output: 0, Signal: "SIGTERM"})
	results := []tools.ResultInput{
		{Content: []tools.Content{tools.Text("hello\n")}, Meta: fg},
		{Content: []tools.Content{tools.Text("(no output)\n[killed by signal: SIGTERM]")}, Meta: sig},
		{Content: []tools.Content{tools.Text("out\n[exit code: 2]")}},
		{Content: []tools.Content{tools.Text("Started background task bash-1.")}},
		{IsError: true, Content: []tools.Content{tools.Text("Error: command aborted")}},
	}
	samples := map[string][]json.RawMessage{
		"bash": {
			json.RawMessage(`{"command":"ls -la","description":"List files","timeoutMs":5000}`),
			json.RawMessage(`{"command":"make test","workdir":"sub","run_in_background":true}`),
			json.RawMessage(`{"command":"touch ../x","dangerously_disable_sandbox":true}`),
		},
		"bash_output": {json.RawMessage(`{"task_id":"bash-1"}`)},
		"bash_kill":   {json.RawMessage(`{"task_id":"bash-1"}`)},
	}
	for _, tl := range m.Tools() {
		t.Run(tl.Name, func(t *testing.T) {
			toolstest.Run(t, tl, toolstest.Config{Samples: samples[tl.Name], Results: results})
		})
	}
}
