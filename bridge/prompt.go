package bridge

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// promptContent turns an ACP prompt into model input: text blocks as
// they are, resource links as a one-line reference, embedded text
// resources as the file text inside a <resource> tag. A file URI is
// given to the model as the decoded path it names (issue 13, item 12:
// the model passes it to the file tools as is), with Zed's selection
// fragment as lines: `[resource_link name="…" path="/a b/c.go"
// lines="10-20"]`; other URIs as they are: `[resource_link name="…"
// uri="…"]`. Any other block (image, audio, binary resource) and an
// empty prompt are -32602.
func promptContent(blocks []acp.ContentBlock) ([]tools.Content, error) {
	if len(blocks) == 0 {
		return nil, acp.InvalidParams("Invalid params: prompt is empty")
	}
	var out []tools.Content
	nonEmpty := false
	for i, bl := range blocks {
		switch bl.Type {
		case "text":
			out = append(out, tools.Text(bl.Text))
			nonEmpty = nonEmpty || strings.TrimSpace(bl.Text) != ""
		case "resource_link":
			out = append(out, tools.Text("\n[resource_link name="+fmt.Sprintf("%q", bl.Name)+" "+uriAttrs(bl.URI)+"]\n"))
			nonEmpty = true
		case "resource":
			if bl.Resource == nil || bl.Resource.Blob != "" {
				return nil, acp.InvalidParams("Invalid params: prompt[%d]: only text resources are supported", i)
			}
			out = append(out, tools.Text("\n<resource "+uriAttrs(bl.Resource.URI)+">\n"+bl.Resource.Text+"\n</resource>\n"))
			nonEmpty = true
		default:
			return nil, acp.InvalidParams("Invalid params: prompt[%d]: unsupported content block type %q", i, bl.Type)
		}
	}
	if !nonEmpty {
		return nil, acp.InvalidParams("Invalid params: prompt is empty")
	}
	return out, nil
}

// uriAttrs names a resource for the model: `path="…"` (and `lines="…"`)
// for a file URI, `uri="…"` for any other.
func uriAttrs(uri string) string {
	path, lines, ok := filePath(uri)
	if !ok {
		return fmt.Sprintf("uri=%q", uri)
	}
	if lines != "" {
		return fmt.Sprintf("path=%q lines=%q", path, lines)
	}
	return fmt.Sprintf("path=%q", path)
}

// selection is Zed's line selection fragment: L10 or L10:20 (1-based,
// inclusive).
var selection = regexp.MustCompile(`^L([0-9]+)(?::([0-9]+))?$`)

// filePath decodes a file URI naming a local absolute path:
// file:///a%20b/c.go is "/a b/c.go" (a directory's final slash is kept);
// a #L10:20 fragment gives lines "10-20", #L10 "10". ok is false for
// other URIs, a remote host, a relative or undecodable path.
func filePath(uri string) (path, lines string, ok bool) {
	u, err := url.Parse(uri)
	if err != nil || !strings.EqualFold(u.Scheme, "file") || u.Opaque != "" {
		return "", "", false
	}
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		return "", "", false
	}
	if u.Path == "" || !filepath.IsAbs(u.Path) {
		return "", "", false
	}
	path = filepath.Clean(u.Path)
	if strings.HasSuffix(u.Path, "/") && path != "/" {
		path += "/"
	}
	if m := selection.FindStringSubmatch(u.Fragment); m != nil {
		lines = m[1]
		if m[2] != "" && m[2] != m[1] {
			lines += "-" + m[2]
		}
	}
	return path, lines, true
}
