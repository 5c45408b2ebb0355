package present

import (
	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// contentItems makes a card item of each content block of a generic
// card (an MCP tool's result has images and resources besides text).
//
// ACP lets a tool call's content hold any ContentBlock (schema
// ToolCallContent "content"), and a client advertises no capability for
// what it shows there (promptCapabilities are the agent's, for prompts),
// so the blocks an editor is known to render go as themselves: text;
// an image with its MIME type (Zed shows it inline); a resource link
// (every client must take links); an embedded text resource. The
// others, audio and binary (blob) resources, go as their text form
// ("[audio: audio/wav, 1204 bytes]"), which names what the tool
// returned, since Zed drops such blocks from a card without a trace;
// so does an image, link or resource missing a field the schema
// requires (an empty text resource has no valid ACP form).
func contentItems(cs []tools.Content) []acp.ToolCallContent {
	var out []acp.ToolCallContent
	for _, c := range cs {
		out = append(out, acp.Content{Content: contentBlock(c)})
	}
	return out
}

// contentBlock is c as the ACP block a card shows (see contentItems).
func contentBlock(c tools.Content) acp.ContentBlock {
	switch c.Type {
	case "", tools.ContentText:
		return acp.TextBlock(c.Text)
	case tools.ContentImage:
		if c.Data != "" && c.MimeType != "" {
			return acp.ContentBlock{Type: acp.BlockImage, Data: c.Data, MimeType: c.MimeType}
		}
	case tools.ContentResourceLink:
		if c.URI != "" {
			name := c.Name
			if name == "" {
				name = c.URI
			}
			return acp.ContentBlock{Type: acp.BlockResourceLink, URI: c.URI, Name: name, MimeType: c.MimeType,
				Title: c.Title, Description: c.Description}
		}
	case tools.ContentResource:
		if c.URI != "" && c.Data == "" && c.Text != "" {
			return acp.ContentBlock{Type: acp.BlockResource, Resource: &acp.EmbeddedResource{URI: c.URI, Text: c.Text, MimeType: c.MimeType}}
		}
	}
	return acp.TextBlock(c.TextForm())
}
