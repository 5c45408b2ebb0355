package bridge

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// MaxPromptImageBytes caps the images of one prompt: their decoded bytes
// together, 20 MiB. A prompt's images are kept in the session log as the
// editor sent them (base64: the model history is rebuilt from the log on
// session/load and sent again with every request), so the cap bounds how
// much one prompt adds to the log and to each model request; a prompt
// over it is refused (-32602) rather than cut.
const MaxPromptImageBytes = 20 << 20

// imagePolicy is whether the session's model takes images, and its name
// for the error when it does not.
type imagePolicy struct {
	model string
	ok    bool
	// alt is a model the selector offers that takes images ("" when
	// none does), for the error.
	alt string
}

// promptContent turns an ACP prompt into model input: text blocks as
// they are, resource links as a one-line reference, embedded text
// resources as the file text inside a <resource> tag, and images (when
// img.ok) as image content with their base64 data in its standard form.
// A file URI is given to the model as the decoded path it names (issue
// 13, item 12: the model passes it to the file tools as is), with Zed's
// selection fragment as lines: `[resource_link name="…" path="/a b/c.go"
// lines="10-20"]`; other URIs as they are: `[resource_link name="…"
// uri="…"]`. -32602 for: an empty prompt; an image while the model takes
// none (naming it), without data, of a type that is not image/*, whose
// data is not base64, or past MaxPromptImageBytes; any other block
// (audio, a binary resource).
func promptContent(blocks []acp.ContentBlock, img imagePolicy) ([]tools.Content, error) {
	if len(blocks) == 0 {
		return nil, acp.InvalidParams("Invalid params: prompt is empty")
	}
	var out []tools.Content
	nonEmpty := false
	imageBytes := 0
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
		case "image":
			c, n, err := promptImage(i, bl, img)
			if err != nil {
				return nil, err
			}
			if imageBytes += n; imageBytes > MaxPromptImageBytes {
				return nil, acp.InvalidParams("Invalid params: prompt[%d]: the prompt's images come to more than %d MiB (the limit per prompt)", i, MaxPromptImageBytes>>20)
			}
			out = append(out, c)
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
var selection = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^L([0-9]+)(?::([0-9]+))?$`) })

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
	if m := selection().FindStringSubmatch(u.Fragment); m != nil {
		lines = m[1]
		if m[2] != "" && m[2] != m[1] {
			lines += "-" + m[2]
		}
	}
	return path, lines, true
}

// promptImage checks image block i and returns it as content with its
// decoded size in bytes.
func promptImage(i int, bl acp.ContentBlock, img imagePolicy) (tools.Content, int, error) {
	if !img.ok && img.alt != "" {
		return tools.Content{}, 0, acp.InvalidParams("Invalid params: prompt[%d]: the model %s does not take images; %s does: choose it in the Model selector", i, img.model, img.alt)
	}
	if !img.ok {
		return tools.Content{}, 0, acp.InvalidParams("Invalid params: prompt[%d]: the model %s does not take images (dsh-acp --model-images %s tells the agent it does)", i, img.model, img.model)
	}
	if bl.Data == "" {
		return tools.Content{}, 0, acp.InvalidParams("Invalid params: prompt[%d]: an image needs its data (base64); a uri alone is not supported", i)
	}
	if !strings.HasPrefix(bl.MimeType, "image/") || len(bl.MimeType) == len("image/") {
		return tools.Content{}, 0, acp.InvalidParams("Invalid params: prompt[%d]: image mimeType %q is not an image type (image/png, image/jpeg, ...)", i, bl.MimeType)
	}
	// Checked through a small buffer: the decoded bytes are not kept.
	n, err := io.Copy(io.Discard, base64.NewDecoder(base64.StdEncoding, strings.NewReader(bl.Data)))
	if err != nil {
		return tools.Content{}, 0, acp.InvalidParams("Invalid params: prompt[%d]: image data is not base64: %v", i, err)
	}
	data := bl.Data
	if base64.StdEncoding.EncodedLen(int(n)) != len(data) {
		// Line breaks in the text (the decoder skips them): the model
		// endpoint gets the standard form.
		raw, _ := base64.StdEncoding.DecodeString(data)
		data = base64.StdEncoding.EncodeToString(raw)
	}
	return tools.Image(data, bl.MimeType), int(n), nil
}
