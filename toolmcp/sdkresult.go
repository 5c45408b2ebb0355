// This file converts the SDK's typed result of a live call.

package toolmcp

import (
	"encoding/base64"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-acp/dsh-acp/tools"
)

// sdkResult converts the SDK's result of a call straight from its typed
// content, to what wireResult.result gives for the same result logged
// (json.Marshal(res)): the SDK's JSON has []byte payloads as standard
// base64 and a resource link's title beside its name. stripped makes
// the blocks those of the log without its binary payloads (stripBinary):
// an image or audio block becomes its text form, a resource has no
// blob. structured is json.Marshal(res.StructuredContent) when present,
// the bytes the log holds.
func sdkResult(res *mcp.CallToolResult, stripped bool) (result, error) {
	out := result{content: make([]tools.Content, 0, len(res.Content)+1), isError: res.IsError}
	if res.StructuredContent != nil {
		sc, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return result{}, err
		}
		out.structured = sc
	}
	for _, b := range res.Content {
		var c tools.Content
		switch x := b.(type) {
		case nil:
			// The log holds null: a block without a type, the empty text.
			c = tools.Text("")
			out.texts = append(out.texts, "")
		case *mcp.TextContent:
			c = tools.Text(x.Text)
			out.texts = append(out.texts, x.Text)
		case *mcp.ImageContent:
			c = binaryBlock(tools.ContentImage, x.MIMEType, x.Data, stripped)
		case *mcp.AudioContent:
			c = binaryBlock(tools.ContentAudio, x.MIMEType, x.Data, stripped)
		case *mcp.EmbeddedResource:
			r := x.Resource
			if r == nil {
				c = noResource
				break
			}
			c = tools.Content{Type: tools.ContentResource, URI: r.URI, MimeType: r.MIMEType, Text: r.Text}
			if !stripped {
				c.Data = base64.StdEncoding.EncodeToString(r.Blob)
			}
		case *mcp.ResourceLink:
			c = resourceLink(x.URI, x.Name, x.Title, x.MIMEType)
		default:
			// A type the cards do not show (tool_use, tool_result, one
			// a later SDK adds): the log's "type" names it.
			var w struct{ Type string }
			raw, err := b.MarshalJSON()
			if err == nil {
				err = json.Unmarshal(raw, &w)
			}
			if err != nil {
				return result{}, err
			}
			c = unknownBlock(w.Type)
		}
		out.content = append(out.content, c)
	}
	return out, nil
}

// binaryBlock is an image or audio block (typ) of data, or, stripped,
// its text form.
func binaryBlock(typ, mimeType string, data []byte, stripped bool) tools.Content {
	if stripped {
		return strippedBlock(typ, mimeType)
	}
	return tools.Content{Type: typ, Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}
