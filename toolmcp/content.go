package toolmcp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Size limits of one result: maxModelText is the most of its text the
// model sees (bytes; the rest is cut with a note), maxMetaBytes the most
// of it the log keeps whole: past that, the binary payloads (image and
// audio data, resource blobs) are left out of the log and the card.
const (
	maxModelText = 256 << 10
	maxMetaBytes = 1 << 20
)

// meta is a call's persisted Meta: which server and tool answered, and
// the MCP CallToolResult as the server sent it (the card's rawOutput).
type meta struct {
	Server string          `json:"server"`
	Tool   string          `json:"tool"`
	Result json.RawMessage `json:"result"`
	// Stripped: the binary payloads were left out (over maxMetaBytes).
	Stripped bool `json:"stripped,omitempty"`
}

// wireResult is what the cards read of a CallToolResult (MCP schema
// CallToolResult), decoded without the SDK so that a logged result from
// any server version still shows.
type wireResult struct {
	Content           []wireBlock     `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// wireBlock is one MCP content block: TextContent, ImageContent,
// AudioContent, EmbeddedResource or ResourceLink.
type wireBlock struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	Data     string        `json:"data,omitempty"`
	MimeType string        `json:"mimeType,omitempty"`
	URI      string        `json:"uri,omitempty"`
	Name     string        `json:"name,omitempty"`
	Title    string        `json:"title,omitempty"`
	Resource *wireResource `json:"resource,omitempty"`
}

// wireResource is TextResourceContents or BlobResourceContents.
type wireResource struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// result is a CallToolResult as the model and the cards read it: its
// content blocks converted (tools.Content), the texts of its text
// blocks in order, its structuredContent as JSON (nil when absent) and
// its isError. It is built from the SDK's typed result on a live call
// (sdkResult) and from the logged JSON on replay (wireResult.result).
type result struct {
	content    []tools.Content
	texts      []string
	structured json.RawMessage
	isError    bool
}

// blocks is the result's card blocks: text, image, audio, resource,
// resource_link (tools.Content), then, for a structured result not
// already given as text, a JSON text block (```json fence).
func (r result) blocks() []tools.Content {
	if s := structuredText(r.structured, r.texts); s != "" {
		return append(r.content, tools.Text("```json\n"+s+"\n```"))
	}
	return r.content
}

// result converts the decoded wire form. A block whose payload was
// stripped, or of an unknown type, becomes its text form.
func (r wireResult) result(stripped bool) result {
	out := result{content: make([]tools.Content, 0, len(r.Content)+1), structured: r.StructuredContent, isError: r.IsError}
	for _, b := range r.Content {
		var c tools.Content
		switch b.Type {
		case tools.ContentText, "":
			c = tools.Text(b.Text)
			out.texts = append(out.texts, b.Text)
		case tools.ContentImage, tools.ContentAudio:
			c = tools.Content{Type: b.Type, Data: b.Data, MimeType: b.MimeType}
			if b.Data == "" && stripped {
				c = strippedBlock(b.Type, b.MimeType)
			}
		case tools.ContentResource:
			if b.Resource == nil {
				c = noResource
				break
			}
			c = tools.Content{Type: tools.ContentResource, URI: b.Resource.URI, MimeType: b.Resource.MimeType, Text: b.Resource.Text, Data: b.Resource.Blob}
		case tools.ContentResourceLink:
			c = resourceLink(b.URI, b.Name, b.Title, b.MimeType)
		default:
			c = unknownBlock(b.Type)
		}
		out.content = append(out.content, c)
	}
	return out
}

// noResource is an embedded resource block without its contents.
var noResource = tools.Text("[resource without contents]")

// strippedBlock is the text form of an image or audio block (typ) whose
// data was left out of the log.
func strippedBlock(typ, mimeType string) tools.Content {
	return tools.Text("[" + typ + ": " + orDash(mimeType) + ", left out of the log: the result was over 1 MiB]")
}

// resourceLink is a resource_link block: named by its title, else its
// name.
func resourceLink(uri, name, title, mimeType string) tools.Content {
	if title != "" {
		name = title
	}
	return tools.Content{Type: tools.ContentResourceLink, URI: uri, Name: name, MimeType: mimeType}
}

// unknownBlock is the text form of a block of a type the cards do not
// show.
func unknownBlock(typ string) tools.Content { return tools.Text("[" + typ + " content]") }

// structuredText is the structured content sc as indented JSON, or ""
// when there is none or the text blocks (texts) already say it: one
// holds the same JSON (the spec asks servers to send both), or every
// leaf of it is a string the text blocks hold verbatim
// (server-filesystem's {"content": <the file>} beside the file's text),
// so that the model and the card do not get the same text twice.
func structuredText(sc json.RawMessage, texts []string) string {
	sc = bytes.TrimSpace(sc)
	if len(sc) == 0 || string(sc) == "null" {
		return ""
	}
	var want any
	if json.Unmarshal(sc, &want) != nil {
		return ""
	}
	canon, _ := json.Marshal(want)
	for _, t := range texts {
		var got any
		if json.Unmarshal([]byte(t), &got) == nil {
			if g, _ := json.Marshal(got); bytes.Equal(g, canon) {
				return ""
			}
		}
	}
	if len(texts) > 0 && stringsWithin(want, texts) {
		return ""
	}
	var ind bytes.Buffer
	if json.Indent(&ind, sc, "", "  ") != nil {
		return string(sc)
	}
	return ind.String()
}

// stringsWithin reports whether v (decoded JSON) has only string leaves,
// at least one not empty, and each is within one of texts.
func stringsWithin(v any, texts []string) bool {
	some := false
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			if x == "" {
				return true
			}
			some = true
			for _, t := range texts {
				if strings.Contains(t, x) {
					return true
				}
			}
			return false
		case map[string]any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
			return true
		case []any:
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
			return true
		}
		return false
	}
	return walk(v) && some
}

// modelText is what the model is told of a result: each block's text
// form, one per line, cut at maxModelText bytes.
func modelText(blocks []tools.Content) string {
	var b strings.Builder
	for i, c := range blocks {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.TextForm())
	}
	s := b.String()
	if s == "" {
		return "(the tool returned no content)"
	}
	if len(s) > maxModelText {
		cutAt := maxModelText
		for cutAt > 0 && !utf8.RuneStart(s[cutAt]) {
			cutAt--
		}
		s = s[:cutAt] + "\n[… " + strconv.Itoa(len(s)-cutAt) + " more bytes cut]"
	}
	return s
}

// errorText is the server's message of an isError result.
func errorText(blocks []tools.Content) string {
	var parts []string
	for _, c := range blocks {
		if t := strings.TrimSpace(c.TextForm()); t != "" {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return "the tool reported an error without a message"
	}
	return strings.Join(parts, "\n")
}

// stripBinary returns raw (a CallToolResult) without its image and audio
// data and resource blobs, and whether anything was left out.
func stripBinary(raw json.RawMessage) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw, false
	}
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(m["content"], &blocks) != nil {
		return raw, false
	}
	stripped := false
	for _, b := range blocks {
		if _, ok := b["data"]; ok {
			delete(b, "data")
			stripped = true
		}
		var res map[string]json.RawMessage
		if json.Unmarshal(b["resource"], &res) == nil {
			if _, ok := res["blob"]; ok {
				delete(res, "blob")
				b["resource"], _ = json.Marshal(res)
				stripped = true
			}
		}
	}
	m["content"], _ = json.Marshal(blocks)
	out, err := json.Marshal(m)
	if err != nil {
		return raw, false
	}
	return out, stripped
}

func orDash(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
