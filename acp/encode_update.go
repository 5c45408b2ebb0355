package acp

import (
	"fmt"
	"strconv"
)

// The hand-written encoders of the session update types. Each writes the
// bytes encoding/json wrote for the type when it had reflective
// MarshalJSON methods (kept as the reference in the tests): the same keys
// in the same order, the same omissions, strings escaped with HTML
// escaping (those methods used json.Marshal). They append to dst and, on
// error, return it with partial output that the caller discards.

// appendJSON appends the notification's JSON object. The session id is
// escaped without HTML escaping and the update with it, which is what a
// json.Encoder with SetEscapeHTML(false) writes for the notification
// (the connection's encoder).
func (n *SessionNotification) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"sessionId":`...)
	dst = appendString(dst, n.SessionID, false)
	dst = append(dst, `,"update":`...)
	dst, err := n.Update.appendJSON(dst)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// MarshalJSON writes {"sessionId", "update"}; encoding/json then applies
// its own HTML escaping to the whole, so the bytes are those it wrote for
// the plain struct.
func (n SessionNotification) MarshalJSON() ([]byte, error) {
	return n.appendJSON(make([]byte, 0, 256))
}

// appendJSON appends the update object; see SessionUpdate.MarshalJSON for
// which fields are written where.
func (u *SessionUpdate) appendJSON(dst []byte) ([]byte, error) {
	first := true
	dst = append(dst, '{')
	if u.SessionUpdate != "" {
		dst = appendStringMember(dst, &first, "sessionUpdate", u.SessionUpdate)
	}
	// A tool call's content list shadows the chunk's content block, and a
	// session title the tool call's title; both then go last.
	toolContent := u.ToolContent != nil
	infoTitle := !toolContent && u.InfoTitle != nil
	var err error
	if u.Content != nil && !toolContent {
		if dst, err = u.Content.appendJSON(appendKey(dst, &first, "content")); err != nil {
			return dst, err
		}
	}
	if u.ToolCallID != "" {
		dst = appendStringMember(dst, &first, "toolCallId", u.ToolCallID)
	}
	if u.Title != nil && !infoTitle {
		dst = appendStringMember(dst, &first, "title", *u.Title)
	}
	if u.Kind != "" {
		dst = appendStringMember(dst, &first, "kind", string(u.Kind))
	}
	if u.Status != "" {
		dst = appendStringMember(dst, &first, "status", string(u.Status))
	}
	if u.Locations != nil {
		dst = appendLocations(appendKey(dst, &first, "locations"), u.Locations)
	}
	if len(u.RawInput) > 0 {
		if dst, err = appendRaw(appendKey(dst, &first, "rawInput"), u.RawInput, true); err != nil {
			return dst, fmt.Errorf("acp: rawInput: %w", err)
		}
	}
	if len(u.RawOutput) > 0 {
		if dst, err = appendRaw(appendKey(dst, &first, "rawOutput"), u.RawOutput, true); err != nil {
			return dst, fmt.Errorf("acp: rawOutput: %w", err)
		}
	}
	if u.ToolCallExtra != nil {
		dst = u.ToolCallExtra.appendJSON(appendKey(dst, &first, "_meta"))
	}
	if u.Entries != nil {
		dst = appendPlan(appendKey(dst, &first, "entries"), u.Entries)
	}
	if u.AvailableCommands != nil {
		dst = appendCommands(appendKey(dst, &first, "availableCommands"), u.AvailableCommands)
	}
	if u.CurrentModeID != "" {
		dst = appendStringMember(dst, &first, "currentModeId", u.CurrentModeID)
	}
	if u.UpdatedAt != "" {
		dst = appendStringMember(dst, &first, "updatedAt", u.UpdatedAt)
	}
	switch {
	case toolContent:
		dst = append(appendKey(dst, &first, "content"), '[')
		for i := range u.ToolContent {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = u.ToolContent[i].appendJSON(dst); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	case infoTitle:
		dst = appendStringMember(dst, &first, "title", *u.InfoTitle)
	}
	return append(dst, '}'), nil
}

// appendJSON appends the content block: type, then for a text block its
// text (always), else each non-empty field; annotations and _meta last.
func (b *ContentBlock) appendJSON(dst []byte) ([]byte, error) {
	first := true
	dst = appendStringMember(append(dst, '{'), &first, "type", b.Type)
	if b.Type == "text" {
		dst = appendStringMember(dst, &first, "text", b.Text)
	} else {
		for _, f := range [...]struct{ name, value string }{
			{"text", b.Text}, {"data", b.Data}, {"mimeType", b.MimeType}, {"uri", b.URI},
			{"name", b.Name}, {"title", b.Title}, {"description", b.Description},
		} {
			if f.value != "" {
				dst = appendStringMember(dst, &first, f.name, f.value)
			}
		}
		if b.Size != nil {
			dst = strconv.AppendInt(appendKey(dst, &first, "size"), *b.Size, 10)
		}
		if r := b.Resource; r != nil {
			dst = append(appendKey(dst, &first, "resource"), '{')
			rfirst := true
			dst = appendStringMember(dst, &rfirst, "uri", r.URI)
			if r.Text != "" {
				dst = appendStringMember(dst, &rfirst, "text", r.Text)
			}
			if r.Blob != "" {
				dst = appendStringMember(dst, &rfirst, "blob", r.Blob)
			}
			if r.MimeType != "" {
				dst = appendStringMember(dst, &rfirst, "mimeType", r.MimeType)
			}
			dst = append(dst, '}')
		}
	}
	var err error
	if len(b.Annotations) > 0 {
		if dst, err = appendRaw(appendKey(dst, &first, "annotations"), b.Annotations, true); err != nil {
			return dst, fmt.Errorf("acp: annotations: %w", err)
		}
	}
	if len(b.Meta) > 0 {
		if dst, err = appendRaw(appendKey(dst, &first, "_meta"), b.Meta, true); err != nil {
			return dst, fmt.Errorf("acp: _meta: %w", err)
		}
	}
	return append(dst, '}'), nil
}

// appendJSON appends the item with the fields of its type.
func (c *ToolCallContent) appendJSON(dst []byte) ([]byte, error) {
	switch c.Type {
	case "content":
		if c.Content == nil {
			return dst, fmt.Errorf("acp: content item without a content block")
		}
		dst = append(dst, `{"type":"content","content":`...)
		dst, err := c.Content.appendJSON(dst)
		if err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	case "diff":
		dst = append(dst, `{"type":"diff","path":`...)
		dst = appendString(dst, c.Path, true)
		dst = appendStringPtr(append(dst, `,"oldText":`...), c.OldText)
		dst = appendString(append(dst, `,"newText":`...), c.NewText, true)
		return append(dst, '}'), nil
	case "terminal":
		dst = append(dst, `{"type":"terminal","terminalId":`...)
		dst = appendString(dst, c.TerminalID, true)
		return append(dst, '}'), nil
	}
	return dst, fmt.Errorf("acp: unknown tool call content type %q", c.Type)
}

func appendLocations(dst []byte, locs []ToolCallLocation) []byte {
	dst = append(dst, '[')
	for i, l := range locs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(append(dst, `{"path":`...), l.Path, true)
		if l.Line != nil {
			dst = strconv.AppendInt(append(dst, `,"line":`...), int64(*l.Line), 10)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendPlan(dst []byte, entries []PlanEntry) []byte {
	dst = append(dst, '[')
	for i, e := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(append(dst, `{"content":`...), e.Content, true)
		dst = appendString(append(dst, `,"priority":`...), e.Priority, true)
		dst = appendString(append(dst, `,"status":`...), e.Status, true)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendCommands(dst []byte, cmds []AvailableCommand) []byte {
	dst = append(dst, '[')
	for i, c := range cmds {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(append(dst, `{"name":`...), c.Name, true)
		dst = appendString(append(dst, `,"description":`...), c.Description, true)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendJSON appends the terminal _meta object (always an object, {} when
// empty).
func (m *ToolCallMeta) appendJSON(dst []byte) []byte {
	first := true
	dst = append(dst, '{')
	if t := m.TerminalInfo; t != nil {
		dst = appendString(append(appendKey(dst, &first, "terminal_info"), `{"terminal_id":`...), t.TerminalID, true)
		if t.Cwd != "" {
			dst = appendString(append(dst, `,"cwd":`...), t.Cwd, true)
		}
		dst = append(dst, '}')
	}
	if t := m.TerminalOutput; t != nil {
		dst = appendString(append(appendKey(dst, &first, "terminal_output"), `{"terminal_id":`...), t.TerminalID, true)
		dst = appendString(append(dst, `,"data":`...), t.Data, true)
		dst = append(dst, '}')
	}
	if t := m.TerminalExit; t != nil {
		dst = appendString(append(appendKey(dst, &first, "terminal_exit"), `{"terminal_id":`...), t.TerminalID, true)
		dst = appendIntPtr(append(dst, `,"exit_code":`...), t.ExitCode)
		dst = appendStringPtr(append(dst, `,"signal":`...), t.Signal)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}
