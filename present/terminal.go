package present

import (
	"strings"
	"time"

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
// terminal_exit); any other gets the output in a console fence,
// snapshotted at most every snapshotEvery while it runs.

// snapshotEvery is the least time between two output snapshots of a
// terminal card shown to an editor without live terminals.
const snapshotEvery = time.Second

// snapshotTail is how much output such a snapshot shows, in bytes.
const snapshotTail = 8 << 10

// terminalCall is the card parts of a TerminalCall view: a terminal card
// when tool declared itself Terminal, else a plain execute card (title and
// description only).
func (r *paths) terminalCall(tool tools.Tool, callID string, v tools.TerminalCall) callParts {
	parts := callParts{title: oneLine(v.Title), kind: acp.ToolKind(tools.KindExecute)}
	if v.Description != "" {
		parts.content = []acp.ToolCallContent{acp.TextContent(v.Description)}
	}
	if !tool.Terminal {
		return parts
	}
	parts.terminal, parts.desc, parts.cwd = true, v.Description, v.Cwd
	if r.view.TerminalOutput {
		parts.content = append(parts.content, acp.Terminal{TerminalID: callID})
	}
	return parts
}

// terminalStart is the status and _meta of a terminal card's tool_call:
// in_progress, or pending when the call will ask for permission first;
// terminal_info (with the absolute cwd) for a live terminal.
func (p *Presenter) terminalStart(c *callState, callID, name, cwd string) (acp.ToolCallStatus, *acp.ToolCallMeta) {
	status := acp.StatusInProgress
	if p.WillAsk != nil && p.WillAsk(name, c.args) {
		status, c.pending = acp.StatusPending, true
	}
	if !p.view.TerminalOutput {
		return status, nil
	}
	return status, &acp.ToolCallMeta{TerminalInfo: &acp.TerminalInfo{TerminalID: callID, Cwd: p.abs(cwd)}}
}

// progress forwards live terminal output: as it comes to a live
// terminal, else as snapshots of its tail.
func (p *Presenter) progress(d session.ToolProgress) []acp.Update {
	c := p.calls[d.CallID]
	if c == nil || !c.terminal || d.Progress.Output == "" {
		return nil
	}
	if p.view.TerminalOutput {
		c.sentLive = true
		return []acp.Update{acp.ToolCallUpdate{ToolCallID: d.CallID,
			Meta: &acp.ToolCallMeta{TerminalOutput: &acp.TerminalOutput{TerminalID: d.CallID, Data: d.Progress.Output}}}}
	}
	c.tail = appendTail(c.tail, d.Progress.Output, snapshotTail)
	now := p.now()
	if now.Sub(c.lastSnap) < snapshotEvery {
		return nil
	}
	c.lastSnap = now
	return []acp.Update{acp.ToolCallUpdate{ToolCallID: d.CallID, Content: p.terminalContent(c, string(c.tail))}}
}

// terminalResult completes u, the final update of terminal card c: the
// output (the view's, else the tool's text) and the exit code or signal
// of view (nil when the result view was not a terminal one). A live
// terminal gets the output not yet streamed and terminal_exit; any other
// card the output in a console fence. A cancelled call ends with SIGTERM
// and a "[cancelled by the user]" line.
func (p *Presenter) terminalResult(c *callState, u acp.ToolCallUpdate, view *tools.TerminalResult, text string, cancelled bool) acp.ToolCallUpdate {
	output, exit, signal := text, (*int)(nil), (*string)(nil)
	if view != nil && !cancelled {
		output, exit = view.Output, view.ExitCode
		if view.Signal != "" {
			s := view.Signal
			signal, exit = &s, nil
		}
	}
	if cancelled {
		s := "SIGTERM"
		signal = &s
		u.RawOutput = acp.JSONString("Cancelled by the user.\n" + text)
	}
	if p.view.TerminalOutput {
		data := ""
		if !c.sentLive {
			data = output
		}
		if cancelled {
			if data != "" && !strings.HasSuffix(data, "\n") {
				data += "\n"
			}
			data += "[cancelled by the user]\n"
		}
		u.Meta = &acp.ToolCallMeta{
			TerminalOutput: &acp.TerminalOutput{TerminalID: u.ToolCallID, Data: data},
			TerminalExit:   &acp.TerminalExit{TerminalID: u.ToolCallID, ExitCode: exit, Signal: signal},
		}
		return u
	}
	if cancelled {
		if output = strings.TrimRight(output, "\n"); output != "" {
			output += "\n"
		}
		output += "[cancelled by the user]"
	}
	u.Content = p.terminalContent(c, output)
	return u
}

// terminalContent is a no-capability terminal card: the description and
// the output in a console fence longer than any backtick run inside.
func (p *Presenter) terminalContent(c *callState, output string) []acp.ToolCallContent {
	var items []acp.ToolCallContent
	if c.desc != "" {
		items = append(items, acp.TextContent(c.desc))
	}
	return append(items, acp.TextContent(tools.ConsoleFence(strings.TrimRight(output, "\n"))))
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
