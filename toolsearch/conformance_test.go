package toolsearch

import (
	"encoding/json"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/tools/toolstest"
)

// TestConformance runs the tools contract checks on grep and glob, with
// their typical arguments and results (files with locations, no match, a
// Meta that is not this tool's, an error).
func TestConformance(t *testing.T) {
	meta := resultMeta{Locations: []tools.FileLocation{{Path: "/w/a.go", Line: 3}, {Path: "/w/b.go"}}}.marshal()
	results := []tools.ResultInput{
		{Content: []tools.Content{tools.Text("a.go\nb.go")}, Meta: meta},
		{Content: []tools.Content{tools.Text("No files found")}},
		{Content: []tools.Content{tools.Text("a.go:3:x")}, Meta: json.RawMessage(`{"locations":[{"path":""}]}`)},
		{IsError: true, Content: []tools.Content{tools.Text("Error: path not found")}},
	}
	samples := map[string][]json.RawMessage{
		"grep": {
			json.RawMessage(`{"pattern":"func \\w+","path":"src","glob":"*.go","output_mode":"content","context":2,"ignore_case":true}`),
			json.RawMessage(`{"pattern":"TODO","output_mode":"count"}`),
		},
		"glob": {json.RawMessage(`{"pattern":"**/*.ts","path":"web"}`)},
	}
	for _, tl := range Tools() {
		t.Run(tl.Name, func(t *testing.T) {
			toolstest.Run(t, tl, toolstest.Config{Samples: samples[tl.Name], Results: results})
		})
	}
}
