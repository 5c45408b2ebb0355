package bridge

import (
	"encoding/base64"
	"errors"
	"strings"
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
		out, err := promptContent([]acp.ContentBlock{{Type: "resource_link", Name: "n", URI: c.uri}}, imagePolicy{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := tools.JoinText(out), "\n[resource_link name=\"n\" "+c.want+"]\n"; got != want {
			t.Errorf("%s: %q, want %q", c.uri, got, want)
		}
	}
	out, err := promptContent([]acp.ContentBlock{{Type: "resource", Resource: &acp.EmbeddedResource{URI: "file:///p/a%20b.go", Text: "package p"}}}, imagePolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tools.JoinText(out); got != "\n<resource path=\"/p/a b.go\">\npackage p\n</resource>\n" {
		t.Errorf("resource: %q", got)
	}
}

// TestPromptImageCap: the images of one prompt may come to
// MaxPromptImageBytes decoded bytes, not one more; an image's base64
// with line breaks is kept in its standard form.
func TestPromptImageCap(t *testing.T) {
	ok := imagePolicy{model: "m", ok: true}
	half := base64.StdEncoding.EncodeToString(make([]byte, MaxPromptImageBytes/2))
	img := acp.ContentBlock{Type: acp.BlockImage, MimeType: "image/png", Data: half}
	out, err := promptContent([]acp.ContentBlock{img, img}, ok)
	if err != nil || len(out) != 2 || out[1].Data != half || out[1].Type != tools.ContentImage || out[1].MimeType != "image/png" {
		t.Fatalf("exactly the cap: %v (%d blocks)", err, len(out))
	}
	_, err = promptContent([]acp.ContentBlock{img, img, {Type: acp.BlockImage, MimeType: "image/gif", Data: "R0lG"}}, ok)
	var ae *acp.Error
	if !errors.As(err, &ae) || ae.Code != acp.CodeInvalidParams || ae.Message != "Invalid params: prompt[2]: the prompt's images come to more than 20 MiB (the limit per prompt)" {
		t.Errorf("3 bytes past the cap: %v", err)
	}
	out, err = promptContent([]acp.ContentBlock{{Type: acp.BlockImage, MimeType: "image/png", Data: "iVBO\nRw0K\r\nGgo="}}, ok)
	if err != nil || out[0].Data != "iVBORw0KGgo=" {
		t.Errorf("base64 with line breaks: %+v, %v", out, err)
	}
	_, err = promptContent([]acp.ContentBlock{{Type: acp.BlockImage, MimeType: "image/png", Data: "iVBORw0KGgo="}}, imagePolicy{model: "deepseek-chat"})
	if !errors.As(err, &ae) || !strings.Contains(ae.Message, "the model deepseek-chat does not take images (dsh-acp --model-images deepseek-chat tells the agent it does)") {
		t.Errorf("text-only model: %v", err)
	}
	if _, err := promptContent([]acp.ContentBlock{{Type: acp.BlockImage, MimeType: "image/", Data: "iVBORw0KGgo="}}, ok); err == nil {
		t.Error(`mimeType "image/" accepted`)
	}
}

// BenchmarkPromptImage: checking a prompt that carries the most images
// allowed (20 MiB decoded, in one image).
func BenchmarkPromptImage(b *testing.B) {
	data := base64.StdEncoding.EncodeToString(make([]byte, MaxPromptImageBytes))
	blocks := []acp.ContentBlock{acp.TextBlock("look"), {Type: acp.BlockImage, MimeType: "image/png", Data: data}}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := promptContent(blocks, imagePolicy{model: "m", ok: true}); err != nil {
			b.Fatal(err)
		}
	}
}
