package acp

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// trickyStrings exercise every escaping rule: HTML bytes, quotes and
// backslashes, control bytes, U+2028/2029, invalid and truncated UTF-8.
var trickyStrings = []string{
	"", "a", "<a&b>", `quote"back\slash`, "\x00\x01\x1f\x7f", "\b\f\n\r\t", "\u2028\u2029",
	"\xff\xfe", "é日本🙂", "\xe2\x80", "\xe2\x80\xa8x\xe2\x80\xa9", "/proj/a b.go", "text with\nnewline",
	"\xed\xa0\x80", "\xf4\x90\x80\x80",
}

// trickyRaws are raw JSON fields: valid ones with whitespace and bytes to
// escape inside strings, and invalid ones (the encoders must both fail).
var trickyRaws = []string{
	"", "{}", ` { "a" : [1, 2 ,"<x>&"] } `, "\"\u2028\u2029\"", `"a\"<b\\"`, "null", " 12 ", "\"\xff\"",
	"{\n\t\"k\": {\"n\": true}\r\n}", "{", `{"a":1}x`, "\"\x01\"", `[]`, `"\u003c"`,
}

// gen builds random values from a seeded source plus fuzz-supplied text.
type gen struct {
	r     *rand.Rand
	extra []string
	raw   []string
}

func (g *gen) str() string {
	if len(g.extra) > 0 && g.r.IntN(3) == 0 {
		return g.extra[g.r.IntN(len(g.extra))]
	}
	if g.r.IntN(4) == 0 {
		const alphabet = "a<>&\"\\\x00\x1f\n\xe2\x80\xa8\xa9\xff\xc3\xa9 "
		b := make([]byte, g.r.IntN(10))
		for i := range b {
			b[i] = alphabet[g.r.IntN(len(alphabet))]
		}
		return string(b)
	}
	return trickyStrings[g.r.IntN(len(trickyStrings))]
}

func (g *gen) maybeStr() string {
	if g.r.IntN(2) == 0 {
		return ""
	}
	return g.str()
}

func (g *gen) strPtr() *string {
	if g.r.IntN(2) == 0 {
		return nil
	}
	s := g.str()
	return &s
}

func (g *gen) intPtr() *int {
	if g.r.IntN(2) == 0 {
		return nil
	}
	n := g.r.IntN(2000) - 1000
	return &n
}

func (g *gen) rawJSON() json.RawMessage {
	if g.r.IntN(2) == 0 {
		return nil
	}
	pool := append(append([]string(nil), trickyRaws...), g.raw...)
	// Invalid raws are rarer, so that most updates encode.
	s := pool[g.r.IntN(len(pool))]
	if !json.Valid([]byte(s)) && g.r.IntN(4) != 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

func (g *gen) block() *ContentBlock {
	if g.r.IntN(3) == 0 {
		return nil
	}
	types := []string{"text", "text", "image", "resource_link", "resource", "", "audio"}
	b := &ContentBlock{Type: types[g.r.IntN(len(types))], Text: g.maybeStr(), Data: g.maybeStr(), MimeType: g.maybeStr(),
		URI: g.maybeStr(), Name: g.maybeStr(), Title: g.maybeStr(), Description: g.maybeStr(),
		Annotations: g.rawJSON(), Meta: g.rawJSON()}
	if g.r.IntN(2) == 0 {
		n := g.r.Int64() - 1<<62
		b.Size = &n
	}
	if g.r.IntN(2) == 0 {
		b.Resource = &EmbeddedResource{URI: g.str(), Text: g.maybeStr(), Blob: g.maybeStr(), MimeType: g.maybeStr()}
	}
	return b
}

func (g *gen) items() []ToolCallContent {
	if g.r.IntN(3) == 0 {
		return nil
	}
	out := []ToolCallContent{}
	for range g.r.IntN(4) {
		switch g.r.IntN(12) {
		case 0, 1, 2, 3:
			c := g.block()
			if c == nil && g.r.IntN(8) != 0 {
				c = &ContentBlock{Type: "text"}
			}
			out = append(out, ToolCallContent{Type: "content", Content: c})
		case 4, 5, 6, 7:
			out = append(out, ToolCallContent{Type: "diff", Path: g.str(), OldText: g.strPtr(), NewText: g.str()})
		case 8, 9, 10:
			out = append(out, ToolCallContent{Type: "terminal", TerminalID: g.str()})
		default:
			out = append(out, ToolCallContent{Type: g.str()})
		}
	}
	return out
}

func (g *gen) update() SessionUpdate {
	kinds := []string{"", UpdateAgentMessageChunk, UpdateToolCall, UpdateToolCallUpdate, UpdatePlan, UpdateSessionInfo}
	u := SessionUpdate{SessionUpdate: kinds[g.r.IntN(len(kinds))], Content: g.block(), ToolCallID: g.maybeStr(),
		Title: g.strPtr(), Kind: ToolKind(g.maybeStr()), Status: ToolCallStatus(g.maybeStr()), ToolContent: g.items(),
		RawInput: g.rawJSON(), RawOutput: g.rawJSON(), CurrentModeID: g.maybeStr(), InfoTitle: g.strPtr(), UpdatedAt: g.maybeStr()}
	if g.r.IntN(2) == 0 {
		u.Locations = []ToolCallLocation{}
		for range g.r.IntN(3) {
			u.Locations = append(u.Locations, ToolCallLocation{Path: g.str(), Line: g.intPtr()})
		}
	}
	if g.r.IntN(2) == 0 {
		m := &ToolCallMeta{}
		if g.r.IntN(2) == 0 {
			m.TerminalInfo = &TerminalInfo{TerminalID: g.str(), Cwd: g.maybeStr()}
		}
		if g.r.IntN(2) == 0 {
			m.TerminalOutput = &TerminalOutput{TerminalID: g.str(), Data: g.maybeStr()}
		}
		if g.r.IntN(2) == 0 {
			m.TerminalExit = &TerminalExit{TerminalID: g.str(), ExitCode: g.intPtr(), Signal: g.strPtr()}
		}
		u.ToolCallExtra = m
	}
	if g.r.IntN(4) == 0 {
		u.Entries = []PlanEntry{}
		for range g.r.IntN(3) {
			u.Entries = append(u.Entries, PlanEntry{Content: g.str(), Priority: g.str(), Status: g.str()})
		}
	}
	if g.r.IntN(4) == 0 {
		u.AvailableCommands = []AvailableCommand{}
		for range g.r.IntN(3) {
			u.AvailableCommands = append(u.AvailableCommands, AvailableCommand{Name: g.str(), Description: g.str()})
		}
	}
	return u
}

// encodeLine encodes v as the connection's encoder does (no HTML
// escaping, trailing newline).
func encodeLine(v any, html bool) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	err := enc.Encode(v)
	return b.Bytes(), err
}

// checkUpdate compares every encoding path of u with the reference.
func checkUpdate(t *testing.T, sid string, u SessionUpdate) {
	t.Helper()
	ref := refUpdate(u)
	want, wantErr := json.Marshal(ref)
	got, gotErr := json.Marshal(u)
	if (wantErr != nil) != (gotErr != nil) {
		t.Fatalf("Marshal error = %v, reference %v\nupdate %#v", gotErr, wantErr, u)
	}
	if wantErr != nil {
		if _, err := (&SessionNotification{SessionID: sid, Update: u}).appendJSON(nil); err == nil {
			t.Fatalf("appendJSON accepted an update the reference rejects (%v)", wantErr)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Marshal\n got %s\nwant %s", got, want)
	}
	var gm, wm map[string]any
	if err := json.Unmarshal(got, &gm); err != nil {
		t.Fatalf("output is not a JSON object: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &wm); err != nil || !reflect.DeepEqual(gm, wm) {
		t.Fatalf("decoded values differ: %v\n got %v\nwant %v", err, gm, wm)
	}
	for _, html := range []bool{false, true} {
		wantLine, err1 := encodeLine(refSessionNotification{sid, ref}, html)
		gotLine, err2 := encodeLine(SessionNotification{sid, u}, html)
		if err1 != nil || err2 != nil || !bytes.Equal(gotLine, wantLine) {
			t.Fatalf("Encoder (html %v): %v %v\n got %s\nwant %s", html, err2, err1, gotLine, wantLine)
		}
		if !html {
			n := SessionNotification{sid, u}
			direct, err := n.appendJSON([]byte("x"))
			if err != nil || string(direct[1:])+"\n" != string(wantLine) {
				t.Fatalf("appendJSON: %v\n got %s\nwant %s", err, direct[1:], wantLine)
			}
		}
	}
}

// TestEncodeMatchesReference: random updates, tricky strings and raw
// fields included, encode to exactly the reference bytes on every path
// (json.Marshal, a json.Encoder with and without HTML escaping, the
// connection's direct path), and fail exactly when the reference fails.
func TestEncodeMatchesReference(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(1, 2))}
	failures := 0
	for i := range 5000 {
		u := g.update()
		if _, err := json.Marshal(refUpdate(u)); err != nil {
			failures++
		}
		sid := "sess-1"
		if i%7 == 0 {
			sid = g.str()
		}
		checkUpdate(t, sid, u)
	}
	if failures == 0 || failures > 4000 {
		t.Errorf("%d of 5000 updates failed to encode; the generator should cover both outcomes", failures)
	}
}

// TestAppendString compares the string escaper with encoding/json on
// every single byte and on the tricky strings.
func TestAppendString(t *testing.T) {
	var in []string
	for b := range 256 {
		in = append(in, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
	}
	in = append(in, trickyStrings...)
	for _, s := range in {
		checkString(t, s)
	}
}

func checkString(t *testing.T, s string) {
	t.Helper()
	want, _ := json.Marshal(s)
	if got := JSONString(s); !bytes.Equal(got, want) {
		t.Fatalf("appendString(%q, html) = %s, want %s", s, got, want)
	}
	line, _ := encodeLine(s, false)
	if got := appendString(nil, s, false); string(got)+"\n" != string(line) {
		t.Fatalf("appendString(%q) = %s, want %s", s, got, line)
	}
}

// FuzzEncode compares the encoder with the reference on updates built
// from a seed and fuzzed text (run with -fuzz=FuzzEncode).
func FuzzEncode(f *testing.F) {
	f.Add(uint64(1), "<&>", "\u2028", []byte(` {"a": "b"} `))
	f.Add(uint64(7), "\xff", "\x00", []byte(`{`))
	f.Fuzz(func(t *testing.T, seed uint64, s1, s2 string, raw []byte) {
		checkString(t, s1)
		checkString(t, s2)
		g := &gen{r: rand.New(rand.NewPCG(seed, 3)), extra: []string{s1, s2}, raw: []string{string(raw)}}
		for range 4 {
			checkUpdate(t, s2, g.update())
		}
	})
}
