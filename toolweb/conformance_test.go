package toolweb

import (
	"encoding/json"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/tools/toolstest"
)

// TestConformance runs the tools contract checks on web_search and
// web_fetch (both offered: DeepSeek's API), with their typical arguments
// and results (search results and a fetched page with their Meta, a Meta
// of the other tool, an error).
func TestConformance(t *testing.T) {
	search, _ := json.Marshal(searchMeta{Results: []searchResult{{Title: "Go", URL: "https://go.dev/", Summary: "The Go language"}}})
	page, _ := json.Marshal(fetchMeta{URL: "https://go.dev/doc/", Title: "Docs", Chars: 1200, Truncated: true})
	results := []tools.ResultInput{
		{Content: []tools.Content{tools.Text("1. Go\nhttps://go.dev/\nThe Go language")}, Meta: search},
		{Content: []tools.Content{tools.Text("Title: Docs\nURL: https://go.dev/doc/\n\n# Docs")}, Meta: page},
		{Content: []tools.Content{tools.Text("No results.")}},
		{IsError: true, Content: []tools.Content{tools.Text("Error: the host refused the request")}},
	}
	samples := map[string][]json.RawMessage{
		SearchName: {json.RawMessage(`{"query":"site:go.dev generics","count":5}`), json.RawMessage(`{"query":"golang"}`)},
		FetchName:  {json.RawMessage(`{"url":"https://go.dev/doc/"}`)},
	}
	ts := Tools(Config{BaseURL: "https://api.deepseek.com", DeepSeek: true, Key: func() (string, error) { return "k", nil }})
	if len(ts) != 2 {
		t.Fatalf("%d tools, want web_search and web_fetch", len(ts))
	}
	for _, tl := range ts {
		t.Run(tl.Name, func(t *testing.T) {
			toolstest.Run(t, tl, toolstest.Config{Samples: samples[tl.Name], Results: results})
		})
	}
}
