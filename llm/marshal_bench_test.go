package llm

import (
	"strings"
	"testing"
)

// BenchmarkMarshalRequest encodes a request of 1,000 tool results of
// about 2.5 KB each (source text with tabs, quotes and newlines), the
// history of a long session.
func BenchmarkMarshalRequest(b *testing.B) {
	out := strings.Repeat("     1\tpackage main // \"a line\" of a file the model read\n", 45)
	req := Request{Model: "m"}
	for i := range 1000 {
		req.Messages = append(req.Messages, Message{Role: "tool", ToolCallID: "call_" + string(rune('a'+i%26)), Content: out})
	}
	b.ReportAllocs()
	for b.Loop() {
		body, err := MarshalRequest(req)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(body)))
	}
}
