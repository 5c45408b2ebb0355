package tools_test

import (
	"encoding/json"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/tools/toolstest"
)

// TestConformance runs the conformance suite on this package's test tools.
func TestConformance(t *testing.T) {
	t.Run("bash-like", func(t *testing.T) {
		toolstest.Run(t, bashLike(), toolstest.Config{
			Samples: []json.RawMessage{
				json.RawMessage(`{"command":"ls -la","description":"List files"}`),
				json.RawMessage(`{"command":"sleep 5","description":"Wait","timeoutMs":1000,"workdir":"/tmp","run_in_background":true}`),
			},
			Results: []tools.ResultInput{{Content: []tools.Content{tools.Text("total 0\n")}}},
		})
	})
	t.Run("echo", func(t *testing.T) { toolstest.Run(t, echoTool("echo", nil), toolstest.Config{}) })
}
