// This file turns a call's result into the model's content, the logged
// Meta and the final card.

package toolmcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-acp/dsh-acp/tools"
)

// output builds a successful call's Output from the SDK's result,
// converted from its typed content (sdkResult): the model's text (every
// block's text form) and images, Meta (the result, for the log and a
// replay's card) and View, the final card built from the same blocks
// (the live card takes it; presentResult decodes Meta only on replay).
func (d *toolDef) output(res *mcp.CallToolResult) (tools.Output, error) {
	conv, err := sdkResult(res, false)
	if err != nil {
		return tools.Output{}, mcpError(CodeProtocol, "MCP server %q: tool %q: unreadable result: %v", d.server, d.original, err)
	}
	blocks := conv.blocks()
	if conv.isError {
		return tools.Output{}, mcpError(CodeToolError, "%s", errorText(blocks))
	}
	// json.Marshal(res) would compact the method's JSON (already
	// compact) once more: the same bytes, a scan of them less.
	raw, err := res.MarshalJSON()
	if err != nil {
		return tools.Output{}, mcpError(CodeProtocol, "MCP server %q: tool %q: unreadable result: %v", d.server, d.original, err)
	}
	m := meta{Server: d.server, Tool: d.original, Result: raw}
	card := blocks
	if len(raw) > maxMetaBytes {
		m.Result, m.Stripped = stripBinary(raw)
		if m.Stripped {
			stripped, _ := sdkResult(res, true)
			card = stripped.blocks()
		}
	}
	rest, imgs := carriedImages(blocks)
	var content []tools.Content
	if len(rest) > 0 || len(imgs) == 0 {
		content = append(content, tools.Text(modelText(rest)))
	}
	content = append(content, imgs...)
	if len(card) == 0 {
		card = content // as presentResult shows a result without blocks
	}
	return tools.Output{Content: content, Meta: m.marshal(), View: tools.GenericResult{Content: card, RawOutput: m.Result}}, nil
}

// marshal is json.Marshal(m), built around m.Result as it is: that is
// json.Marshal's output (compact, HTML-escaped), which json.Marshal
// would scan once more to compact it, at about 70 MB/s (10 ms for a
// 700 KB image).
func (m meta) marshal() []byte {
	server, _ := json.Marshal(m.Server)
	tool, _ := json.Marshal(m.Tool)
	b := make([]byte, 0, len(server)+len(tool)+len(m.Result)+48)
	b = append(append(b, `{"server":`...), server...)
	b = append(append(b, `,"tool":`...), tool...)
	b = append(append(b, `,"result":`...), m.Result...)
	if m.Stripped {
		b = append(b, `,"stripped":true`...)
	}
	return append(b, '}')
}

// presentResult is the final card: the result's blocks (text, images,
// resources, structured content) and the CallToolResult as rawOutput;
// for an error, the error text. A live call's card is output's View;
// this builds it from a logged result's Meta (decodeLogged), on replay,
// to the same card.
func (d *toolDef) presentResult(args json.RawMessage, r tools.ResultInput) tools.ToolResultView {
	if r.IsError || len(r.Meta) == 0 {
		return tools.GenericResult{Content: r.Content}
	}
	m, res, ok := decodeLogged(r.Meta)
	if !ok {
		return tools.GenericResult{Content: r.Content}
	}
	blocks := res.result(m.Stripped).blocks()
	if len(blocks) == 0 {
		blocks = r.Content
	}
	return tools.GenericResult{Content: blocks, RawOutput: bytes.Clone(m.Result)}
}

// loggedDecodes counts decodeLogged's calls (the tests count them).
var loggedDecodes atomic.Int64

// decodeLogged decodes a logged Meta and the result it holds; ok is
// false when it is not such a Meta.
func decodeLogged(raw json.RawMessage) (m meta, res wireResult, ok bool) {
	loggedDecodes.Add(1)
	if json.Unmarshal(raw, &m) != nil || json.Unmarshal(m.Result, &res) != nil {
		return meta{}, wireResult{}, false
	}
	return m, res, true
}

// carriedImages splits a result's blocks into the images the model is
// given as images (a PNG, JPEG, GIF or WebP within
// tools.MaxToolImageBytes; the agent sends them to a model that takes
// images and a text line to one that does not) and the rest, which the
// model reads as text (a larger or other image as its text form).
func carriedImages(blocks []tools.Content) (rest, imgs []tools.Content) {
	for _, c := range blocks {
		switch {
		case c.Type != tools.ContentImage || c.Data == "":
		case c.MimeType != tools.MimePNG && c.MimeType != tools.MimeJPEG && c.MimeType != tools.MimeGIF && c.MimeType != tools.MimeWebP:
		case base64.StdEncoding.DecodedLen(len(c.Data)) > tools.MaxToolImageBytes:
		default:
			imgs = append(imgs, c)
			continue
		}
		rest = append(rest, c)
	}
	return rest, imgs
}
