package present

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// The rules of terminal cards. A tool declared Terminal whose call view
// is a TerminalCall is shown as a terminal: announced only once its
// arguments are complete (its first message must carry the terminal),
// in_progress from the start (pending when it will ask first), kind
// execute, its description as the first item. An editor with
// `_meta.terminal_output` (View.TerminalOutput) gets a live terminal (Zed's
// convention: terminal_info, then terminal_output chunks, then
// terminal_exit); any other gets the output in a console fence, as a
// snapshot of its last snapshotTail bytes with every report of the tool
// (the tool paces its reports; the presenter adds no delay of its own).
//
// What a terminal shows is what the program printed: the exit goes in
// terminal_exit only, never into the output; the tool's Notes (a
// truncation line, a timeout) and "[cancelled by the user]" are the only
// other lines, each on a line of its own, and the card's text content
// repeats them (for every editor: Zed shows nothing of a terminal card
// but the terminal), and so does a line with the exit code of a command
// that failed. The final rawOutput is the structured result (shellRaw:
// exit code, signal, whether the output was cut), never the output again.
//
// Titles: Zed draws a terminal card as the terminal alone, headed by the
// title as a command block, so a live terminal's title is the whole
// command, line breaks and all, up to liveTitleBytes. Every other card
// (no live terminal, or a plain execute card) is titled with the
// command's first line (tools.CommandTitle). Whenever the title does not
// hold the whole command, the command follows the description in a sh
// fence, so that no line of it is only in rawInput (which Zed does not
// draw). PermissionCard shows the same title and content.

// snapshotTail is how much output a snapshot of a terminal card shown to
// an editor without live terminals holds, in bytes.
const snapshotTail = 8 << 10

// liveTitleBytes is the longest title of a live terminal card, in bytes:
// a longer command is cut there (at a character boundary, with "…") and
// shown whole in the content.
const liveTitleBytes = 16 << 10

// cancelLine is the last output line of a cancelled terminal card; its
// terminal_exit then names the signal sent.
const cancelLine = "[cancelled by the user]"

// termState is what the presenter remembers of a terminal card's output.
type termState struct {
	head     []acp.ToolCallContent // content items before the output (description, command)
	sentLive bool                  // live terminal output was sent
	lastByte byte                  // the last byte sent to the live terminal, 0 before any
	tail     []byte                // no live terminal: the output so far (its tail)
	snapped  bool                  // no live terminal: a snapshot was sent
	notes    []string              // the tool's notes so far
}

// terminalCall is the card parts of a TerminalCall view: a terminal card
// when tool declared itself Terminal, else a plain execute card (title,
// description and, when the title does not hold it, the command).
func (r *paths) terminalCall(tool tools.Tool, callID string, v tools.TerminalCall) callParts {
	live := tool.Terminal && r.view.TerminalOutput
	title, whole := terminalTitle(v.Title, live)
	parts := callParts{title: title, kind: acp.ToolKind(tools.KindExecute)}
	if v.Description != "" {
		parts.content = append(parts.content, acp.TextContent(v.Description))
	}
	if !whole {
		parts.content = append(parts.content, acp.TextContent(tools.ShellFence(v.Title)))
	}
	if !tool.Terminal {
		return parts
	}
	parts.terminal, parts.head, parts.cwd = true, parts.content[:len(parts.content):len(parts.content)], v.Cwd
	if live {
		parts.content = append(parts.content, acp.Terminal{TerminalID: callID})
	}
	return parts
}

// terminalTitle is the title of a card for command: for a live terminal
// the whole command (blanks around it removed) up to liveTitleBytes, else
// its one-line form; whole reports whether it holds the whole command.
func terminalTitle(command string, live bool) (title string, whole bool) {
	if !live {
		return tools.CommandTitle(command)
	}
	title = strings.TrimSpace(command)
	if len(title) <= liveTitleBytes {
		return title, true
	}
	n := liveTitleBytes - len("…")
	for n > 0 && title[n]&0xC0 == 0x80 {
		n--
	}
	return title[:n] + "…", false
}

// terminalMeta is the _meta of a terminal card's tool_call:
// terminal_info with the absolute cwd, for a live terminal (nil
// otherwise). The card starts pending, as every card, and turns
// in_progress when the command runs.
func (p *Presenter) terminalMeta(callID, cwd string) *acp.ToolCallMeta {
	if !p.view.TerminalOutput {
		return nil
	}
	return &acp.ToolCallMeta{TerminalInfo: &acp.TerminalInfo{TerminalID: callID, Cwd: p.abs(cwd)}}
}

// progress forwards a terminal tool's report: output and notes as they
// come to a live terminal, else a snapshot of the output's tail (and the
// notes so far) with every report. A report's Card text replaces the
// content of a card that is not a terminal.
func (p *Presenter) progress(d session.ToolProgress) []acp.Update {
	c := p.calls[d.CallID]
	out, note := d.Progress.Output, d.Progress.Note
	if c != nil && !c.terminal && d.Progress.Card != "" {
		return []acp.Update{acp.ToolCallUpdate{ToolCallID: d.CallID, Content: []acp.ToolCallContent{acp.TextContent(d.Progress.Card)}}}
	}
	if c == nil || !c.terminal || (out == "" && note == "") {
		return nil
	}
	t := &c.term
	if note != "" {
		t.notes = append(t.notes, note)
	}
	if p.view.TerminalOutput {
		data := out
		if note != "" {
			data = t.line(data, note)
		}
		t.sent(data)
		return []acp.Update{acp.ToolCallUpdate{ToolCallID: d.CallID,
			Meta: &acp.ToolCallMeta{TerminalOutput: &acp.TerminalOutput{TerminalID: d.CallID, Data: data}}}}
	}
	t.tail = appendTail(t.tail, out, snapshotTail)
	t.snapped = true
	return []acp.Update{acp.ToolCallUpdate{ToolCallID: d.CallID, Content: t.content(string(t.tail), strings.Join(t.notes, "\n"))}}
}

// line returns data with line appended on a line of its own (after a line
// break when the terminal, data included, does not end with one).
func (t *termState) line(data, line string) string {
	last := t.lastByte
	if data != "" {
		last = data[len(data)-1]
	}
	if last != 0 && last != '\n' {
		data += "\n"
	}
	return data + line + "\n"
}

// sent records data as sent to the live terminal.
func (t *termState) sent(data string) {
	if data != "" {
		t.sentLive, t.lastByte = true, data[len(data)-1]
	}
}

// terminalResult completes u, the final update of terminal card c: from
// the result view (nil when it is not a terminal one: then the tool's
// text is the output) the output, the notes and the exit code or signal.
// A live terminal gets the output only when none was streamed (a
// replay), and terminal_exit; its content repeats the tool's live notes
// when there were any. Any other card gets the output in a console fence
// and the notes after it. A cancelled call keeps what was shown, then
// says it was cancelled; it ends with SIGTERM, the signal sent, unless it
// never ran (notRun: cancelled before its turn came): then no signal was
// sent and none is claimed, terminal_exit has neither code nor signal.
func (p *Presenter) terminalResult(c *callState, u acp.ToolCallUpdate, view *tools.TerminalResult, text string, cancelled, notRun bool) acp.ToolCallUpdate {
	t := &c.term
	output, notes, exit, signal := text, "", (*int)(nil), (*string)(nil)
	if view != nil {
		output, notes, exit = view.Output, view.Notes, view.ExitCode
		if view.Signal != "" {
			s := view.Signal
			signal, exit = &s, nil
		}
	}
	if cancelled {
		s := "SIGTERM"
		signal, exit = &s, nil
		if notRun {
			signal, output = nil, ""
		}
		if view == nil {
			// The text is the tool's error ("command aborted"), not
			// output.
			output = ""
		}
		notes = strings.Join(append(append([]string(nil), t.notes...), cancelLine), "\n")
	}
	u.RawOutput = shellRawOutput(view, exit, signal, cancelled, text)
	if p.view.TerminalOutput {
		data := ""
		if !t.sentLive {
			data = output
		}
		if cancelled {
			data = t.line(data, cancelLine)
		}
		u.Meta = &acp.ToolCallMeta{
			TerminalOutput: &acp.TerminalOutput{TerminalID: u.ToolCallID, Data: data},
			TerminalExit:   &acp.TerminalExit{TerminalID: u.ToolCallID, ExitCode: exit, Signal: signal},
		}
		lines := t.notes
		if e := exitLine(exit, signal, cancelled); e != "" {
			lines = append(lines[:len(lines):len(lines)], e)
		}
		if len(lines) > 0 {
			// Content replaces the whole list: the terminal is sent
			// again with it.
			items := append(append([]acp.ToolCallContent(nil), t.head...), acp.Terminal{TerminalID: u.ToolCallID})
			u.Content = append(items, acp.TextContent(strings.Join(lines, "\n")))
		}
		return u
	}
	if cancelled && t.snapped {
		// What was shown so far stays.
		output = string(t.tail)
	}
	u.Content = t.content(output, notes)
	if u.Content == nil && t.snapped {
		u.Content = []acp.ToolCallContent{} // clear the last snapshot
	}
	return u
}

// content is a card without a live terminal: the head items, the output
// in a console fence longer than any backtick run inside (none when
// empty), then the notes (none when empty).
func (t *termState) content(output, notes string) []acp.ToolCallContent {
	items := append([]acp.ToolCallContent(nil), t.head...)
	if output = strings.TrimRight(output, "\n"); output != "" {
		items = append(items, acp.TextContent(tools.ConsoleFence(output)))
	}
	if notes != "" {
		items = append(items, acp.TextContent(notes))
	}
	return items
}

// appendTail appends s to tail and keeps at most limit bytes, cut at a
// UTF-8 character boundary.
func appendTail(tail []byte, s string, limit int) []byte {
	tail = append(tail, s...)
	if len(tail) <= limit {
		return tail
	}
	cut := len(tail) - limit
	for cut < len(tail) && tail[cut]&0xC0 == 0x80 {
		cut++
	}
	return append(tail[:0], tail[cut:]...)
}

// shellRaw is a terminal card's final rawOutput: the structured result
// of the command (the output itself is on the card once, in the terminal
// or its console fence). ExitCode and Signal are null when unknown (a
// cancelled call that never ran has neither); Error is the tool's text
// when the call failed before it ran a command (a refused argument).
type shellRaw struct {
	ExitCode   *int     `json:"exitCode"`
	Signal     *string  `json:"signal"`
	Cancelled  bool     `json:"cancelled,omitempty"`
	Truncated  bool     `json:"truncated,omitempty"`
	FullOutput []string `json:"fullOutput,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// shellRawOutput is the rawOutput of a terminal card's final update
// (shellRaw) from its result view (nil when the result is not a
// terminal one: then text is the tool's error, unless cancelled).
func shellRawOutput(view *tools.TerminalResult, exit *int, signal *string, cancelled bool, text string) json.RawMessage {
	r := shellRaw{ExitCode: exit, Signal: signal, Cancelled: cancelled}
	switch {
	case view != nil:
		r.Truncated, r.FullOutput = view.Truncated, view.FullOutput
	case !cancelled:
		r.Error = text
	}
	b, err := json.Marshal(r)
	if err != nil {
		return acp.JSONString(text)
	}
	return b
}

// exitLine is the line a live terminal card's content adds for a command
// that did not succeed ("[exit code: 3]", "[killed by signal: SIGKILL]"),
// so that every card, not only the terminal's exit, shows it; "" for a
// success, an unknown exit or a cancel (the terminal says that itself).
func exitLine(exit *int, signal *string, cancelled bool) string {
	switch {
	case cancelled:
		return ""
	case signal != nil:
		return "[killed by signal: " + *signal + "]"
	case exit != nil && *exit != 0:
		return "[exit code: " + strconv.Itoa(*exit) + "]"
	}
	return ""
}
