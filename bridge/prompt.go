package bridge

import (
	"fmt"
	"strings"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// promptContent turns an ACP prompt into model input: text blocks as
// they are, resource links as a one-line reference, embedded text
// resources as the file text inside a <resource> tag. Any other block
// (image, audio, binary resource) and an empty prompt are -32602.
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
			out = append(out, tools.Text(fmt.Sprintf("\n[resource_link name=%q uri=%q]\n", bl.Name, bl.URI)))
			nonEmpty = true
		case "resource":
			if bl.Resource == nil || bl.Resource.Blob != "" {
				return nil, acp.InvalidParams("Invalid params: prompt[%d]: only text resources are supported", i)
			}
			out = append(out, tools.Text(fmt.Sprintf("\n<resource uri=%q>\n%s\n</resource>\n", bl.Resource.URI, bl.Resource.Text)))
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
