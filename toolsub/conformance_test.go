package toolsub

import (
	"encoding/json"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/tools/toolstest"
)

// TestConformance runs the tools contract checks on subagent and
// subagent_fork, with their arguments and results (an answer with the
// child's compact view in its Meta, one without, the errors).
func TestConformance(t *testing.T) {
	meta, _ := json.Marshal(Meta{SessionID: "sess_child", Lines: []string{"- Read notes.txt (completed)"}})
	results := []tools.ResultInput{
		{Content: []tools.Content{tools.Text("Paris")}, Meta: meta},
		{Content: []tools.Content{tools.Text("done")}},
		{IsError: true, Content: []tools.Content{tools.Text("Error: subagent run was cancelled")}},
	}
	sample := []json.RawMessage{json.RawMessage(`{"description":"Find the capital","prompt":"What is the capital of France? Answer in one word."}`)}
	for _, tl := range Tools(Options{}) {
		t.Run(tl.Name, func(t *testing.T) {
			toolstest.Run(t, tl, toolstest.Config{Samples: sample, Results: results})
		})
	}
}
