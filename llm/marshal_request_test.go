package llm

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// oldMarshalRequest is the body as encoding/json writes the whole request
// at once (what MarshalRequest wrote before it appended the messages one
// by one): the oracle of TestMarshalRequestSameBytes.
func oldMarshalRequest(t *testing.T, req Request) []byte {
	t.Helper()
	w := wireRequest{Model: req.Model, Messages: req.Messages, Stream: true, StreamOptions: wireStreamOptions{IncludeUsage: true},
		MaxTokens: max(req.MaxTokens, 0), ReasoningEffort: req.Thinking.Effort}
	if req.Thinking.Type != "" {
		w.Thinking = &wireThinking{Type: req.Thinking.Type}
	}
	if w.Messages == nil {
		w.Messages = []Message{}
	}
	for _, tl := range req.Tools {
		w.Tools = append(w.Tools, wireToolSchema{Type: "function", Function: wireFunctionSchema(tl)})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// nasty is a random string of the characters JSON escapes and UTF-8 gets
// wrong: quotes, backslashes, control characters, <>&, U+2028, invalid
// bytes, multi-byte characters.
func nasty(r *rand.Rand) string {
	pieces := []string{"a", "\"", "\\", "\n", "\r", "\t", "\x00", "\x1f", "\b", "\f", "<", ">", "&", "\u2028", "\u2029", "\xff", "\xe2\x82", "é", "€", "😀", "\"messages\":[]"}
	var b strings.Builder
	for range r.IntN(40) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestMarshalRequestSameBytes: for random requests of every message kind
// with strings of every awkward character, the body is byte for byte the
// one encoding/json writes for the whole request, and it fits the buffer
// sized for it (no reallocation while it is built).
func TestMarshalRequestSameBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 4))
	for i := range 300 {
		req := Request{Model: nasty(r), MaxTokens: r.IntN(3) * 100, Thinking: Thinking{Type: []string{"", "enabled"}[r.IntN(2)], Effort: []string{"", "high"}[r.IntN(2)]}}
		if r.IntN(2) == 0 {
			req.Tools = []ToolSchema{{Name: "read", Description: nasty(r), Parameters: json.RawMessage(`{"type":"object"}`)}}
		}
		for range r.IntN(8) {
			m := Message{Role: []string{"system", "user", "assistant", "tool"}[r.IntN(4)], Content: nasty(r)}
			switch m.Role {
			case "assistant":
				m.Reasoning = nasty(r)
				for range r.IntN(3) {
					m.ToolCalls = append(m.ToolCalls, ToolCall{ID: nasty(r), Name: nasty(r), Arguments: nasty(r)})
				}
			case "tool":
				m.ToolCallID = nasty(r)
				if r.IntN(3) == 0 {
					m.Content = ""
				}
			case "user":
				if r.IntN(3) == 0 {
					m.Parts = []Part{{Text: nasty(r)}, ImagePart("image/png", "AAAA")}
				}
			}
			req.Messages = append(req.Messages, m)
		}
		got, err := MarshalRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		if want := oldMarshalRequest(t, req); !bytes.Equal(got, want) {
			t.Fatalf("request %d:\n got %s\nwant %s", i, got, want)
		}
		if len(got) > cap(got) || cap(got) > 2*len(got)+1024 {
			t.Errorf("request %d: %d bytes in a buffer of %d", i, len(got), cap(got))
		}
	}
}

// TestMarshalRequestAllocatesOnce: a 20 MB history of 2,000 tool results
// is encoded with about one body's worth of allocation (the buffer, and
// one message at a time), where encoding it whole allocated several.
func TestMarshalRequestAllocatesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("-race: the detector's own allocations are counted too (4.7x measured); the figure is checked without it")
	}
	out := strings.Repeat("     1\tpackage main // \"a line\" of a file the model read\n", 170) // about 10 KB
	req := Request{Model: "m"}
	for i := range 2000 {
		req.Messages = append(req.Messages, Message{Role: "tool", ToolCallID: "call_" + string(rune('a'+i%26)), Content: out})
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	body, err := MarshalRequest(req)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > uint64(len(body))*5/2 {
		t.Errorf("encoding a %d-byte body allocated %d bytes (%.1fx)", len(body), alloc, float64(alloc)/float64(len(body)))
	}
	t.Logf("%d-byte body, %d bytes allocated (%.2fx)", len(body), alloc, float64(alloc)/float64(len(body)))
}
