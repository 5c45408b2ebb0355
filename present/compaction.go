package present

import (
	"strings"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
)

// Compactions (agent/compact.go) as the editor sees them.
//
// To an editor with `session.compaction`: live, compaction_update
// in_progress when it starts, a compaction_summary_chunk per streamed
// piece of the summary, and compaction_update with the final status
// (and the error of a failed one); replayed from the logged
// session.Compaction, the same updates with the summary in one chunk
// (as a replayed message is one chunk): the editor ends with the same
// compaction either way.
//
// To any other editor: a short agent message of its own (messageId: the
// compaction's id, so it is not merged with the model's message) saying
// that it started and how it ended, in two chunks, live and replayed
// alike. It is no part of the model's history.

// CompactingText and the Compaction*Text strings are the agent message
// an editor without `session.compaction` gets.
const (
	CompactingText     = "Compacting the conversation to stay within the model's context window…"
	CompactingAskedFor = "Compacting the conversation…"
	CompactedText      = " Done: the model now gets a summary in place of the earlier messages (the session log keeps them all).\n\n"
	CompactionCutText  = " Cancelled; the conversation is unchanged.\n\n"
)

// compactionFailedText is the end of the agent message of a failed
// compaction.
func compactionFailedText(why string) string {
	return " It failed: " + strings.TrimSuffix(why, ".") + ". The conversation is unchanged.\n\n"
}

func startText(auto bool) string {
	if auto {
		return CompactingText
	}
	return CompactingAskedFor
}

func (p *Presenter) compactionStart(d session.CompactionStart) []acp.Update {
	if p.view.Compaction {
		return []acp.Update{acp.CompactionUpdate{CompactionID: d.ID, Status: acp.CompactionInProgress}}
	}
	return []acp.Update{acp.AgentMessageChunk{Content: acp.TextBlock(startText(d.Auto)), MessageID: d.ID}}
}

func (p *Presenter) compactionChunk(d session.CompactionChunk) []acp.Update {
	if !p.view.Compaction || d.Text == "" {
		return nil
	}
	return []acp.Update{acp.CompactionSummaryChunk{CompactionID: d.ID, Content: acp.TextBlock(d.Text)}}
}

// compaction is a compaction's end; on replay its start and summary
// come first.
func (p *Presenter) compaction(d session.Compaction) []acp.Update {
	var out []acp.Update
	if p.view.Replay {
		out = append(out, p.compactionStart(session.CompactionStart{ID: d.ID, Turn: d.Turn, Auto: d.Auto})...)
		out = append(out, p.compactionChunk(session.CompactionChunk{ID: d.ID, Text: d.Summary})...)
	}
	if p.view.Compaction {
		u := acp.CompactionUpdate{CompactionID: d.ID, Status: d.Status}
		if d.Error != "" {
			e := d.Error
			u.Error = &e
		}
		return append(out, u)
	}
	end := CompactedText
	switch d.Status {
	case session.CompactionFailed:
		end = compactionFailedText(d.Error)
	case session.CompactionCancelled:
		end = CompactionCutText
	}
	return append(out, acp.AgentMessageChunk{Content: acp.TextBlock(end), MessageID: d.ID})
}
