package toolask

import (
	"encoding/json"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/tools/toolstest"
)

// TestConformance runs the tools contract checks on ask_user, with a
// free question, one with options, and its typical results.
func TestConformance(t *testing.T) {
	toolstest.Run(t, New(), toolstest.Config{
		Samples: []json.RawMessage{
			json.RawMessage(`{"question":"Which database?","options":["Postgres","SQLite"]}`),
			json.RawMessage(`{"question":"What should the command be called?"}`),
		},
		Results: []tools.ResultInput{
			{Content: []tools.Content{tools.Text("The user answered: SQLite")}},
			{IsError: true, Content: []tools.Content{tools.Text("Error: the user declined to answer")}},
		},
	})
}
