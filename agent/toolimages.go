package agent

import (
	"slices"
	"strings"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/tools"
)

// MaxRequestImageBytes bounds the images one model request carries, as
// base64 text (40 MiB: DeepSeek takes request bodies up to 48 MiB and
// the rest of the conversation needs room). The newest images are kept;
// an older one past the bound goes as its text note (boundImages).
const MaxRequestImageBytes = 40 << 20

// toolText is the text of a tool result for the model: its text blocks
// in order, and in place of each image a line (tools.ImageNote) saying
// it follows in the next message (images) or that the model takes no
// images. Without images it is tools.JoinText's (a single text is not
// copied: the history the session keeps shares it with the event).
func toolText(content []tools.Content, images bool) string {
	if !slices.ContainsFunc(content, func(c tools.Content) bool { return c.Type == tools.ContentImage }) {
		return tools.JoinText(content)
	}
	var b strings.Builder
	for _, c := range content {
		switch c.Type {
		case "", tools.ContentText:
			b.WriteString(c.Text)
		case tools.ContentImage:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
				b.WriteByte('\n')
			}
			why := "model takes no images"
			if images {
				why = "sent in the next message"
			}
			b.WriteString(tools.ImageNote(c, why))
		}
	}
	return b.String()
}

// toolImage is an image a tool call returned.
type toolImage struct {
	callID string
	image  tools.Content
}

// resultImages appends content's images (of call callID) to to.
func resultImages(to []toolImage, callID string, content []tools.Content) []toolImage {
	for _, c := range content {
		if c.Type == tools.ContentImage && c.Data != "" && c.MimeType != "" {
			to = append(to, toolImage{callID: callID, image: c})
		}
	}
	return to
}

// toolImagesMessage is the user message that carries the images of one
// step's tool results to a model that takes images: chat completions
// takes images in user messages only, so it follows the step's tool
// messages, each image after a line naming its call.
func toolImagesMessage(imgs []toolImage) llm.Message {
	m := llm.Message{Role: "user"}
	for _, im := range imgs {
		m.Parts = append(m.Parts, llm.Part{Text: "The image returned by tool call " + im.callID + ":"},
			llm.ImagePart(im.image.MimeType, im.image.Data))
	}
	return m
}

// boundImages keeps msgs' image parts within MaxRequestImageBytes, the
// newest first: an older image past the bound becomes a text part saying
// it was left out of the request. msgs is not changed (a session's
// history shares it with earlier requests): when an image is left out,
// the result is a copy, with a copy of each changed message's parts.
func boundImages(msgs []llm.Message) []llm.Message {
	out, total := msgs, 0
	for i := len(msgs) - 1; i >= 0; i-- {
		var parts []llm.Part // msgs[i]'s parts, once copied into out
		for j := len(msgs[i].Parts) - 1; j >= 0; j-- {
			if msgs[i].Parts[j].ImageURL == "" {
				continue
			}
			total += len(msgs[i].Parts[j].ImageURL)
			if total <= MaxRequestImageBytes {
				continue
			}
			if parts == nil {
				if len(out) > 0 && &out[0] == &msgs[0] {
					out = slices.Clone(msgs)
				}
				parts = slices.Clone(msgs[i].Parts)
				out[i].Parts = parts
			}
			parts[j] = llm.Part{Text: "[an image left out: the request's images would be over 40 MiB]"}
		}
	}
	return out
}
