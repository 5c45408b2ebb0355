package toolfs

import (
	"reflect"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

func TestReadCard(t *testing.T) {
	env := func(body string) string { return envelope("/p/a.go", body) }
	texts := func(v tools.ToolResultView) []string {
		g, ok := v.(tools.GenericResult)
		if !ok {
			return nil
		}
		var out []string
		for _, c := range g.Content {
			out = append(out, c.Text)
		}
		return out
	}
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"whole file", env("1: package a\n2: \n3: func F() {}\n\n(End of file - total 3 lines)"),
			[]string{"All 3 lines", "```go\npackage a\n\nfunc F() {}\n```"}},
		{"one line", env("1: x\n\n(End of file - total 1 lines)"), []string{"1 line", "```go\nx\n```"}},
		{"window with a note after the footer", env("5: e\n6: f\n\n(Showing lines 5-6 of 9. Use offset=7 to continue.)\n(This is the editor's buffer.)"),
			[]string{"Lines 5-6 of 9", "```go\ne\nf\n```"}},
		{"capped", env("1: a\n2: b\n\n(Output capped. Showing lines 1-2. Use offset=3 to continue.)"),
			[]string{"Lines 1-2 (the rest passes the size one read returns)", "```go\na\nb\n```"}},
		{"empty file", env("(End of file - total 0 lines)"), []string{"Empty file."}},
		{"backticks in the text", env("1: ```\n\n(End of file - total 1 lines)"), []string{"1 line", "````go\n```\n````"}},
		{"a line whose text looks numbered", env("1: 2: x\n2: 9: y\n\n(End of file - total 2 lines)"), []string{"All 2 lines", "```go\n2: x\n9: y\n```"}},
		{"not an envelope", "1: hello", nil},
		{"numbers out of order", env("1: a\n3: b\n\n(End of file - total 3 lines)"), nil},
		{"no footer", env("1: a"), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := readCard(c.text)
			if got := texts(v); !reflect.DeepEqual(got, c.want) || (c.want == nil) != (v == nil) {
				t.Errorf("card %q (%#v), want %q", got, v, c.want)
			}
		})
	}
}

func TestFenceLanguage(t *testing.T) {
	for path, want := range map[string]string{"/a/b.go": "go", "/a/Makefile": "makefile", "x.PY": "python", "/a/README": "text", "/a/.bashrc": "text", "c.tsx": "tsx"} {
		if got := FenceLanguage(path); got != want {
			t.Errorf("FenceLanguage(%q) = %q, want %q", path, got, want)
		}
	}
}
