package agent

import (
	"sort"
	"strings"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// History derives the model conversation from a session's logged events:
// user messages, assistant messages (with their tool calls and
// reasoning) and one tool message per answered tool call. A tool result
// whose call is in no assistant message (a call cut off mid-stream) is
// left out, and a tool call without a result (never the case for a
// closed turn) gets an "interrupted" result, so the conversation always
// pairs every tool_calls entry with a tool message. A user message with
// images becomes a content array (llm.Message.Parts: its texts and images
// in order) when images is true (the model takes them), else text in
// which each image is its text form ("[image: image/png, 1204 bytes]"),
// so a model that takes none is never sent one. Images a tool returned
// follow the step's tool messages in one user message (toolImagesMessage)
// for a model that takes them; in the tool message a line stands in for
// each (toolText). A request's images stay within MaxRequestImageBytes.
//
// After a completed compaction the conversation starts with its summary
// (one user message, SummaryMessage) in place of every event logged
// before the compaction's Before; the last completed compaction wins.
// Prompts the agent served itself (UserMessage.Local, e.g. /compact) are
// never part of it.
//
// The conversation follows prefix (e.g. the system message) in the one
// slice returned, so a request is built without copying it again.
func History(events []session.Event, images bool, prefix ...llm.Message) []llm.Message {
	return boundImages(newHistory(events, images, prefix).msgs)
}

// history is a conversation being built from a session's events, oldest
// first: History builds one from all of them at once, sessionHistory
// keeps one and folds in each step's new events (fold, when extends
// allows it).
type history struct {
	images bool
	// msgs is the prefix then the conversation so far. Only appended
	// to: a slice of it handed out (capacity cut at its length) never
	// changes.
	msgs []llm.Message
	// results are the ToolResults folded so far, the last one per call
	// id; written are the call ids of the assistant messages in msgs,
	// whose tool messages are written.
	results map[string]session.ToolResult
	written map[string]bool
}

// newHistory is the conversation of events after prefix (images as for
// History): from the last completed compaction's summary on when there
// is one.
func newHistory(events []session.Event, images bool, prefix []llm.Message) *history {
	h := &history{images: images, msgs: prefix, results: map[string]session.ToolResult{}, written: map[string]bool{}}
	if c, ok := lastCompaction(events); ok {
		h.msgs = append(h.msgs, llm.Message{Role: "user", Content: SummaryMessage(c.Summary)})
		events = eventsFrom(events, c.Before)
	}
	h.fold(events)
	return h
}

// extends reports whether folding events (the ones logged after those
// h was built from) gives what newHistory gives for all of them: not
// when they hold a completed compaction (the conversation then starts
// from its summary) or a result for a call whose tool message is
// written (a later result of a call wins; its message would change).
func (h *history) extends(events []session.Event) bool {
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case session.Compaction:
			if d.Status == session.CompactionCompleted {
				return false
			}
		case session.ToolResult:
			if h.written[d.CallID] {
				return false
			}
		default:
			// No other event changes what is written.
		}
	}
	return true
}

// lastCompaction returns the last completed Compaction of events.
func lastCompaction(events []session.Event) (session.Compaction, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if c, ok := events[i].Data.(session.Compaction); ok && c.Status == session.CompactionCompleted {
			return c, true
		}
	}
	return session.Compaction{}, false
}

// eventsFrom returns the events of events (in Seq order) whose Seq is at
// least seq.
func eventsFrom(events []session.Event, seq int64) []session.Event {
	i := sort.Search(len(events), func(i int) bool { return events[i].Seq >= seq })
	return events[i:]
}

// eventsBefore returns the events of events (in Seq order) whose Seq is
// less than seq.
func eventsBefore(events []session.Event, seq int64) []session.Event {
	i := sort.Search(len(events), func(i int) bool { return events[i].Seq >= seq })
	return events[:i]
}

// fold appends the conversation events make to h.msgs, each tool call
// paired with its result among the results folded so far and events'.
func (h *history) fold(events []session.Event) {
	for _, ev := range events {
		if r, ok := ev.Data.(session.ToolResult); ok {
			h.results[r.CallID] = r
		}
	}
	for _, ev := range events {
		switch d := ev.Data.(type) {
		case session.UserMessage:
			if d.Local {
				continue
			}
			h.msgs = append(h.msgs, userMessage(d.Content, h.images))
		case session.ContextMessage:
			h.msgs = append(h.msgs, llm.Message{Role: "user", Content: d.Text})
		case session.AssistantMessage:
			h.assistant(d)
		default:
			// The rest is not part of the conversation: turn and step
			// bounds, streaming pieces, tool cards (a ToolResult is
			// paired with its AssistantMessage), plans, titles, modes.
		}
	}
}

// assistant appends an assistant message (none when it is empty), one
// tool message per call it made (an "interrupted" one for a call
// without a result) and the message with the images the results
// returned (toolImagesMessage), for a model that takes images.
func (h *history) assistant(d session.AssistantMessage) {
	m := llm.Message{Role: "assistant", Content: d.Text, Reasoning: d.Reasoning}
	for _, c := range d.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: c.CallID, Name: c.Name, Arguments: c.Arguments})
	}
	if m.Content == "" && len(m.ToolCalls) == 0 && m.Reasoning == "" {
		return
	}
	h.msgs = append(h.msgs, m)
	var imgs []toolImage
	for _, c := range d.ToolCalls {
		h.written[c.CallID] = true
		text := "Error: tool call interrupted; no result was recorded."
		if r, ok := h.results[c.CallID]; ok {
			text = toolText(r.Content, h.images)
			if h.images {
				imgs = resultImages(imgs, c.CallID, r.Content)
			}
		}
		h.msgs = append(h.msgs, llm.Message{Role: "tool", ToolCallID: c.CallID, Content: text})
	}
	if len(imgs) > 0 {
		h.msgs = append(h.msgs, toolImagesMessage(imgs))
	}
}

// userMessage is a user message of content: its text (JoinText) when it
// has no image; else, with images, the parts (adjacent texts joined, each
// image as a data URL); without, the text with each image's text form in
// its place.
func userMessage(content []tools.Content, images bool) llm.Message {
	m := llm.Message{Role: "user"}
	hasImage := false
	for _, c := range content {
		hasImage = hasImage || c.Type == tools.ContentImage
	}
	if !hasImage {
		m.Content = tools.JoinText(content)
		return m
	}
	var text strings.Builder
	for _, c := range content {
		switch c.Type {
		case "", tools.ContentText:
			text.WriteString(c.Text)
		case tools.ContentImage:
			if !images {
				text.WriteString(c.TextForm())
				continue
			}
			if text.Len() > 0 {
				m.Parts = append(m.Parts, llm.Part{Text: text.String()})
				text.Reset()
			}
			m.Parts = append(m.Parts, llm.ImagePart(c.MimeType, c.Data))
		}
	}
	if !images {
		m.Content = text.String()
	} else if text.Len() > 0 {
		m.Parts = append(m.Parts, llm.Part{Text: text.String()})
	}
	return m
}
