package toolmcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStructuredText: structured content becomes a JSON block unless the
// text blocks already say it (the same JSON, or every string of it
// verbatim, as server-filesystem sends a file); numbers, booleans or a
// string the text lacks keep the block.
func TestStructuredText(t *testing.T) {
	cases := []struct {
		content, structured string
		block               bool
	}{
		{`[{"type":"text","text":"{\"a\": 1}"}]`, `{"a":1}`, false},
		{`[{"type":"text","text":"line one\nline two\n"}]`, `{"content":"line one\nline two\n"}`, false},
		{`[{"type":"text","text":"a: x"},{"type":"text","text":"b: y"}]`, `{"a":"x","b":["y"]}`, false},
		{`[{"type":"text","text":"x"}]`, `{"content":"x","count":2}`, true},
		{`[{"type":"text","text":"x"}]`, `{"content":"z"}`, true},
		{`[{"type":"text","text":"x"}]`, `{"content":""}`, true},
		{`[]`, `{"content":"x"}`, true},
		{`[{"type":"image","data":"eA==","mimeType":"image/png"}]`, `{"content":"eA=="}`, true},
		{`[{"type":"text","text":"x"}]`, ``, false},
	}
	for _, c := range cases {
		var r wireResult
		raw := `{"content":` + c.content
		if c.structured != "" {
			raw += `,"structuredContent":` + c.structured
		}
		if err := json.Unmarshal([]byte(raw+`}`), &r); err != nil {
			t.Fatal(err)
		}
		res := r.result(false)
		got := structuredText(res.structured, res.texts)
		if (got != "") != c.block {
			t.Errorf("content %s, structured %s: block %q, want a block: %v", c.content, c.structured, got, c.block)
		}
		if c.block && !strings.HasPrefix(got, "{\n  ") {
			t.Errorf("block %q is not indented JSON", got)
		}
	}
}
