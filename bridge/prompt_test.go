package bridge

import (
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestPromptFileURIs: file URIs reach the model as decoded paths, with
// Zed's selection as lines; other URIs as they are.
func TestPromptFileURIs(t *testing.T) {
	cases := []struct{ uri, want string }{
		{"file:///home/u/a%20b.txt", `path="/home/u/a b.txt"`},
		{"file:///home/u/%C3%A9t%C3%A9.md", `path="/home/u/été.md"`},
		{"file://localhost/etc/hosts", `path="/etc/hosts"`},
		{"file:///proj/src/", `path="/proj/src/"`},
		{"file:///proj/a.go#L10:20", `path="/proj/a.go" lines="10-20"`},
		{"file:///proj/a.go#L7", `path="/proj/a.go" lines="7"`},
		{"file:///proj/a.go#L7:7", `path="/proj/a.go" lines="7"`},
		{"file:///proj/a.go?symbol=Main", `path="/proj/a.go"`},
		{"file:///proj/./x/../a.go", `path="/proj/a.go"`},
		{"file://server/share/a.go", `uri="file://server/share/a.go"`},
		{"file:relative.go", `uri="file:relative.go"`},
		{"file:///bad%zz", `uri="file:///bad%zz"`},
		{"zed:///agent/thread/1?name=x", `uri="zed:///agent/thread/1?name=x"`},
		{"https://example.com/a%20b", `uri="https://example.com/a%20b"`},
	}
	for _, c := range cases {
		out, err := promptContent([]acp.ContentBlock{{Type: "resource_link", Name: "n", URI: c.uri}})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := tools.JoinText(out), "\n[resource_link name=\"n\" "+c.want+"]\n"; got != want {
			t.Errorf("%s: %q, want %q", c.uri, got, want)
		}
	}
	out, err := promptContent([]acp.ContentBlock{{Type: "resource", Resource: &acp.EmbeddedResource{URI: "file:///p/a%20b.go", Text: "package p"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tools.JoinText(out); got != "\n<resource path=\"/p/a b.go\">\npackage p\n</resource>\n" {
		t.Errorf("resource: %q", got)
	}
}
