package toolfs

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/tools/toolstest"
)

// TestReadCallCards: the reference's presenter examples (fs case 12).
func TestReadCallCards(t *testing.T) {
	read := Read()
	for _, c := range []struct {
		args  string
		title string
		line  int
	}{
		{`{"file_path":"src/a.ts","offset":12,"limit":40}`, "Read src/a.ts (12 - 51)", 12},
		{`{"file_path":"a.txt","limit":10}`, "Read a.txt (1 - 10)", 1},
		{`{"file_path":"a.txt","offset":5}`, "Read a.txt (from line 5)", 5},
		{`{"file_path":"a.txt"}`, "Read a.txt", 1},
		{`{"file_path":"/etc/passwd","offset":1.5}`, "Read /etc/passwd (from line 1.5)", 1},
	} {
		got := read.CallView(json.RawMessage(c.args))
		want := tools.GenericCall{Title: c.title, Kind: tools.KindRead, Locations: []tools.FileLocation{{Path: pathOf(c.args), Line: c.line}}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.args, got, want)
		}
	}
	if v := read.CallView(json.RawMessage(`{"path":"x"}`)); v != nil {
		t.Errorf("old argument shape: %#v, want the generic fallback", v)
	}
	// The result shows the raw text (the reference), but a path that does
	// not exist loses its location.
	args := json.RawMessage(`{"file_path":"g.md:1-20"}`)
	notFound := &tools.ErrorInfo{Name: ErrorName, Code: CodeNotFound}
	for _, c := range []struct {
		in   tools.ResultInput
		want tools.ToolResultView
	}{
		{tools.ResultInput{Content: []tools.Content{tools.Text("<path>…")}}, nil},
		{tools.ResultInput{IsError: true, Error: notFound, Content: []tools.Content{tools.Text(`Error: cannot read "/w/g.md:1-20": not found`)}},
			tools.GenericResult{Locations: []tools.FileLocation{}}},
		{tools.ResultInput{IsError: true, Error: notFound, Content: []tools.Content{tools.Text(`Error: cannot resolve "/w/a/b": a parent path segment is not a directory`)}},
			tools.GenericResult{Locations: []tools.FileLocation{}}},
		{tools.ResultInput{IsError: true, Error: notFound, Content: []tools.Content{tools.Text(`Error: offset 9 is out of range for "/w/a" (3 lines)`)}}, nil},
		{tools.ResultInput{IsError: true, Error: &tools.ErrorInfo{Name: ErrorName, Code: CodeNotText}, Content: []tools.Content{tools.Text(`Error: cannot read "/w/a": binary file`)}}, nil},
		{tools.ResultInput{IsError: true, Content: []tools.Content{tools.Text(`Error: tool "read" panicked: x`)}}, nil},
	} {
		if got := read.ResultView(args, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: result view %#v, want %#v", c.in, got, c.want)
		}
	}
}

func pathOf(args string) string {
	var a struct {
		P string `json:"file_path"`
	}
	_ = json.Unmarshal([]byte(args), &a)
	return a.P
}

func TestWriteCards(t *testing.T) {
	w := Write()
	args := json.RawMessage(`{"file_path":"notes.txt","content":"hello world"}`)
	// From the arguments alone no diff: only the disk knows whether the
	// file exists (Preview tells).
	want := tools.DiffCall{Title: "Write notes.txt", Locations: []tools.FileLocation{{Path: "notes.txt"}}}
	if got := w.CallView(args); !reflect.DeepEqual(got, want) {
		t.Errorf("call card %#v", got)
	}
	if got := w.StartView(json.RawMessage(`{"file_path":"notes.txt"}`)); !reflect.DeepEqual(got, want) {
		t.Errorf("start card %#v", got)
	}
	if got := w.StartView(json.RawMessage(`{"content":"x"}`)); got != nil {
		t.Errorf("start card without a path %#v", got)
	}
	abs := "/w/notes.txt"
	for _, c := range []struct {
		name string
		in   tools.ResultInput
		want tools.ToolResultView
	}{
		{"error", tools.ResultInput{IsError: true}, nil},
		{"create", tools.ResultInput{Meta: marshalMeta(Meta{Op: OpCreate, Path: abs, Locations: []tools.FileLocation{{Path: abs, Line: 1}}})},
			tools.DiffResult{Title: "Write notes.txt", Diffs: []tools.FileDiff{{Path: abs, NewText: "hello world"}}, Locations: []tools.FileLocation{{Path: abs, Line: 1}}}},
		{"update", tools.ResultInput{Meta: marshalMeta(Meta{Op: OpUpdate, Path: abs, Diffs: []tools.FileDiff{{Path: abs, OldText: strp("old"), NewText: "hello world"}}, Locations: []tools.FileLocation{{Path: abs, Line: 1}}})},
			tools.DiffResult{Title: "Write notes.txt", Diffs: []tools.FileDiff{{Path: abs, OldText: strp("old"), NewText: "hello world"}}, Locations: []tools.FileLocation{{Path: abs, Line: 1}}}},
		{"unchanged", tools.ResultInput{Meta: marshalMeta(Meta{Op: OpUnchanged, Path: abs, Locations: []tools.FileLocation{{Path: abs}}})},
			tools.GenericResult{Title: "Write notes.txt", Content: []tools.Content{tools.Text("No changes: the file already had this content.")}, Locations: []tools.FileLocation{{Path: abs}}}},
		{"update without a text basis", tools.ResultInput{Meta: marshalMeta(Meta{Op: OpUpdate, Path: abs})},
			tools.DiffResult{Title: "Write notes.txt", Diffs: []tools.FileDiff{{Path: abs, NewText: "hello world"}}, Locations: []tools.FileLocation{{Path: abs}}}},
		// The reference's persisted shape, or none: the whole-file fallback.
		{"reference meta", tools.ResultInput{Meta: json.RawMessage(`{"diffs":[{"path":"notes.txt","oldText":"a","newText":"b"}]}`)},
			tools.DiffResult{Title: "Write notes.txt", Diffs: []tools.FileDiff{{Path: "notes.txt", NewText: "hello world"}}}},
		{"no meta", tools.ResultInput{}, tools.DiffResult{Title: "Write notes.txt", Diffs: []tools.FileDiff{{Path: "notes.txt", NewText: "hello world"}}}},
		{"bad meta", tools.ResultInput{Meta: json.RawMessage(`{"op":"update","path":"/w/x","locations":[{"path":""}]}`)},
			tools.DiffResult{Title: "Write notes.txt", Diffs: []tools.FileDiff{{Path: "notes.txt", NewText: "hello world"}}}},
	} {
		if got := w.ResultView(args, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.name, got, c.want)
		}
	}
}

func TestEditCards(t *testing.T) {
	ed := Edit()
	args := json.RawMessage(`{"file_path":"config.txt","old_string":"DEBUG","new_string":"RELEASE"}`)
	want := tools.DiffCall{Title: "Edit config.txt", Diffs: []tools.FileDiff{{Path: "config.txt", OldText: strp("DEBUG"), NewText: "RELEASE"}}, Locations: []tools.FileLocation{{Path: "config.txt"}}}
	if got := ed.CallView(args); !reflect.DeepEqual(got, want) {
		t.Errorf("call card %#v", got)
	}
	// An empty old_string (replay only) shows no old text.
	if got := ed.CallView(json.RawMessage(`{"file_path":"c","old_string":"","new_string":"x"}`)).(tools.DiffCall); got.Diffs[0].OldText != nil {
		t.Errorf("empty old_string: %#v", got)
	}
	abs := "/w/config.txt"
	m := Meta{Op: OpUpdate, Path: abs, Diffs: []tools.FileDiff{{Path: abs, OldText: strp("mode=DEBUG\nlevel=info"), NewText: "mode=RELEASE\nlevel=info"}}, Locations: []tools.FileLocation{{Path: abs, Line: 1}}}
	got := ed.ResultView(args, tools.ResultInput{Meta: marshalMeta(m)})
	if want := (tools.DiffResult{Title: "Edit config.txt", Diffs: m.Diffs, Locations: m.Locations}); !reflect.DeepEqual(got, want) {
		t.Errorf("result card %#v", got)
	}
	for _, in := range []tools.ResultInput{{IsError: true, Meta: marshalMeta(m)}, {}, {Meta: json.RawMessage(`[]`)}, {Meta: json.RawMessage(`{"diffs":[]}`)}, {Meta: marshalMeta(Meta{Op: OpUpdate, Path: abs})}} {
		if got := ed.ResultView(args, in); got != nil {
			t.Errorf("%+v: %#v, want the generic text", in, got)
		}
	}
}

// TestDiffEdgeCases runs §7.2's table through a real overwrite: the result
// card shows exactly the reference's hunks.
func TestDiffEdgeCases(t *testing.T) {
	lines := func(n int, change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				b.WriteString(s + "\n")
			} else {
				b.WriteString("line" + itoa(i) + "\n")
			}
		}
		return b.String()
	}
	rng := func(from, to int, change map[int]string) string {
		var out []string
		for i := from; i <= to; i++ {
			if s, ok := change[i]; ok {
				out = append(out, s)
			} else {
				out = append(out, "line"+itoa(i))
			}
		}
		return strings.Join(out, "\n")
	}
	type hunk struct {
		old   *string
		new   string
		lines []int // one location per run of changed lines
	}
	h := func(from, to int, change map[int]string, lines ...int) hunk {
		return hunk{strp(rng(from, to, nil)), rng(from, to, change), lines}
	}
	cases := []struct {
		name          string
		before, after string
		want          []hunk
	}{
		{"8 lines, line 4", lines(8, nil), lines(8, map[int]string{4: "X"}), []hunk{h(1, 7, map[int]string{4: "X"}, 4)}},
		{"20 lines, line 10", lines(20, nil), lines(20, map[int]string{10: "X"}), []hunk{h(7, 13, map[int]string{10: "X"}, 10)}},
		{"lines 3 and 16", lines(20, nil), lines(20, map[int]string{3: "X", 16: "Y"}), []hunk{h(1, 6, map[int]string{3: "X"}, 3), h(13, 19, map[int]string{16: "Y"}, 16)}},
		{"gap of 6 merges", lines(20, nil), lines(20, map[int]string{3: "X", 10: "Y"}), []hunk{h(1, 13, map[int]string{3: "X", 10: "Y"}, 3, 10)}},
		{"gap of 7 splits", lines(20, nil), lines(20, map[int]string{3: "X", 11: "Y"}), []hunk{h(1, 6, map[int]string{3: "X"}, 3), h(8, 14, map[int]string{11: "Y"}, 11)}},
		{"into an empty file", "", "brand new\n", []hunk{{nil, "brand new", []int{1}}}},
		{"whole file deleted", "gone\n", "", []hunk{{strp("gone"), "", []int{1}}}},
		{"no final newline", "x", "y", []hunk{{strp("x"), "y", []int{1}}}},
		{"text appended without final newline", "a\nb", "a\nb\nc\n", []hunk{{strp("a\nb"), "a\nb\nc", []int{2}}}},
		{"first line", lines(10, nil), lines(10, map[int]string{1: "X"}), []hunk{h(1, 4, map[int]string{1: "X"}, 1)}},
		{"last line", lines(10, nil), lines(10, map[int]string{10: "X"}), []hunk{h(7, 10, map[int]string{10: "X"}, 10)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.put("f.txt", c.before)
			e.ok("read", map[string]any{"file_path": "f.txt"})
			r := e.ok("write", map[string]any{"file_path": "f.txt", "content": c.after})
			got := Write().ResultView(json.RawMessage(`{"file_path":"f.txt","content":`+string(mustJSON(c.after))+`}`), tools.ResultInput{Content: r.Content, Meta: r.Meta})
			dr, ok := got.(tools.DiffResult)
			var wantLines, gotLines []int
			for _, w := range c.want {
				wantLines = append(wantLines, w.lines...)
			}
			for _, l := range dr.Locations {
				gotLines = append(gotLines, l.Line)
			}
			if !ok || len(dr.Diffs) != len(c.want) || !slices.Equal(gotLines, wantLines) {
				t.Fatalf("card %#v, want %d hunks at lines %v", got, len(c.want), wantLines)
			}
			for i, w := range c.want {
				d := dr.Diffs[i]
				if !eqp(d.OldText, w.old) || d.NewText != w.new || d.Path != e.path("f.txt") {
					t.Errorf("hunk %d = {%v, %q}, want {%v, %q}", i, show(d.OldText), d.NewText, show(w.old), w.new)
				}
			}
		})
	}
	// Identical content: no hunks, a generic card.
	e := newEnv(t)
	e.put("same.txt", "same\n")
	e.ok("read", map[string]any{"file_path": "same.txt"})
	r := e.ok("write", map[string]any{"file_path": "same.txt", "content": "same\n"})
	if _, ok := Write().ResultView(json.RawMessage(`{"file_path":"same.txt","content":"same\n"}`), tools.ResultInput{Meta: r.Meta}).(tools.GenericResult); !ok {
		t.Errorf("identical write: %s", r.Meta)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestPayloadBound: a change whose diff text passes 1 MiB shows the first
// hunks up to that size and a note; the Meta is bounded the same way; a
// create past the bound shows only the note.
func TestPayloadBound(t *testing.T) {
	e := newEnv(t)
	// 400 lines of 4 KiB, every 10th changed: 40 hunks of ~7 lines × 2 sides.
	var before, after strings.Builder
	for i := 0; i < 400; i++ {
		l := strings.Repeat(string(rune('a'+i%26)), 4096)
		before.WriteString(l + "\n")
		if i%10 == 5 {
			l = strings.ToUpper(l)
		}
		after.WriteString(l + "\n")
	}
	e.put("wide.txt", before.String())
	e.ok("read", map[string]any{"file_path": "wide.txt", "limit": 1})
	r := e.ok("write", map[string]any{"file_path": "wide.txt", "content": after.String()})
	m := meta(t, r)
	size := 0
	for _, d := range m.Diffs {
		size += len(d.NewText) + len(*d.OldText)
	}
	// Each hunk is 7 lines per side: 2 × 7 × 4097 − 2 bytes.
	per := 2 * (7*4097 - 1)
	if len(m.Diffs) != MaxDiffBytes/per || size > MaxDiffBytes || len(m.Locations) != len(m.Diffs) {
		t.Errorf("%d diffs (%d bytes), %d locations; want %d diffs within %d bytes", len(m.Diffs), size, len(m.Locations), MaxDiffBytes/per, MaxDiffBytes)
	}
	left := 40 - len(m.Diffs)
	if want := noteText(left, left, left); m.Note != want {
		t.Errorf("note %q, want %q", m.Note, want)
	}
	if want := "more hunks not shown ("; !strings.Contains(m.Note, want) {
		t.Errorf("note %q", m.Note)
	}
	if len(r.Meta) > MaxDiffBytes+64<<10 {
		t.Errorf("meta is %d bytes", len(r.Meta))
	}
	card := Write().ResultView(mustJSON(map[string]any{"file_path": "wide.txt", "content": after.String()}), tools.ResultInput{Meta: r.Meta}).(tools.DiffResult)
	if card.Note != m.Note || len(card.Diffs) != len(m.Diffs) {
		t.Errorf("card: %d diffs, note %q", len(card.Diffs), card.Note)
	}
	// A create past the bound.
	big := strings.Repeat("0123456789abcdef\n", MaxDiffBytes/17+10)
	r = e.ok("write", map[string]any{"file_path": "big.txt", "content": big})
	card = Write().ResultView(mustJSON(map[string]any{"file_path": "big.txt", "content": big}), tools.ResultInput{Meta: r.Meta}).(tools.DiffResult)
	if len(card.Diffs) != 0 || card.Note != noteText(1, 0, MaxDiffBytes/17+10) {
		t.Errorf("big create: %d diffs, note %q", len(card.Diffs), card.Note)
	}
}

// TestConformance runs the tools package's contract checks.
func TestConformance(t *testing.T) {
	abs := "/w/a.txt"
	results := []tools.ResultInput{
		{Content: []tools.Content{tools.Text("ok")}, Meta: marshalMeta(Meta{Op: OpUpdate, Path: abs, Diffs: []tools.FileDiff{{Path: abs, OldText: strp("a"), NewText: "b"}}, Locations: []tools.FileLocation{{Path: abs, Line: 1}}})},
		{Meta: marshalMeta(Meta{Op: OpCreate, Path: abs, Locations: []tools.FileLocation{{Path: abs, Line: 1}}})},
		{Meta: marshalMeta(Meta{Op: OpUnchanged, Path: abs, Locations: []tools.FileLocation{{Path: abs}}})},
		{Meta: json.RawMessage(`{"op":"update","path":"/w/a.txt","diffs":[{"path":"","oldText":null,"newText":""}]}`)},
		{IsError: true, Content: []tools.Content{tools.Text("Error: x")}},
	}
	samples := map[string][]json.RawMessage{
		"read":  {json.RawMessage(`{"file_path":"a.txt","offset":3,"limit":10}`), json.RawMessage(`{"file_path":"/abs/b.txt"}`)},
		"write": {json.RawMessage(`{"file_path":"a.txt","content":"x\n"}`)},
		"edit":  {json.RawMessage(`{"file_path":"a.txt","old_string":"a","new_string":"b","replace_all":true}`)},
	}
	for _, tl := range Tools() {
		t.Run(tl.Name, func(t *testing.T) {
			toolstest.Run(t, tl, toolstest.Config{Samples: samples[tl.Name], Results: results})
		})
	}
}

// TestStartCards: while the arguments stream, read, write and edit show
// their card once the path is complete (kind and path, no line before the
// offset is known), and nothing before.
func TestStartCards(t *testing.T) {
	cases := []struct {
		tool    tools.Tool
		partial string
		want    tools.ToolCallView
	}{
		{Read(), `{}`, nil},
		{Read(), `{"offset":3}`, nil},
		{Read(), `{"file_path":"src/a_b.go"}`, tools.GenericCall{Title: "Read src/a_b.go", Kind: tools.KindRead, Locations: []tools.FileLocation{{Path: "src/a_b.go"}}}},
		{Read(), `{"file_path":"a.go","offset":5}`, tools.GenericCall{Title: "Read a.go (from line 5)", Kind: tools.KindRead, Locations: []tools.FileLocation{{Path: "a.go", Line: 5}}}},
		{Read(), `{"file_path":3}`, nil},
		{Edit(), `{"old_string":"x"}`, nil},
		{Edit(), `{"file_path":"a.go","old_string":"x"}`, tools.DiffCall{Title: "Edit a.go", Locations: []tools.FileLocation{{Path: "a.go"}}}},
		{Write(), `{"file_path":""}`, nil},
	}
	for _, c := range cases {
		if got := c.tool.StartView(json.RawMessage(c.partial)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: %#v, want %#v", c.tool.Name, c.partial, got, c.want)
		}
	}
}
