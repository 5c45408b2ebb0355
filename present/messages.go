// This file turns the conversation's events into updates: the model's
// chunks as they stream (and its whole message on replay), the user's
// prompt on replay and a steering message when a turn takes it, the plan
// and the context ring.

package present

import (
	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// chunkUpdates is a streamed piece of the model's reasoning or answer.
func chunkUpdates(d session.AssistantChunk) []acp.Update {
	if d.Text == "" {
		return nil
	}
	id := session.AssistantMessageID(d.Turn, d.Step)
	if d.Kind == session.ChunkReasoning {
		return []acp.Update{acp.AgentThoughtChunk{Content: acp.TextBlock(d.Text), MessageID: id}}
	}
	return []acp.Update{acp.AgentMessageChunk{Content: acp.TextBlock(d.Text), MessageID: id}}
}

// messageUpdates is a step's whole message, shown on replay only (live,
// its chunks were).
func (p *Presenter) messageUpdates(d session.AssistantMessage) []acp.Update {
	if !p.view.Replay {
		return nil
	}
	var out []acp.Update
	id := session.AssistantMessageID(d.Turn, d.Step)
	if d.Reasoning != "" {
		out = append(out, acp.AgentThoughtChunk{Content: acp.TextBlock(d.Reasoning), MessageID: id})
	}
	if d.Text != "" {
		out = append(out, acp.AgentMessageChunk{Content: acp.TextBlock(d.Text), MessageID: id})
	}
	return out
}

// userUpdates is a user message: the editor shows the prompt it sent, so
// live only a steering message is echoed (where the turn took it); a
// replay shows every one.
func (p *Presenter) userUpdates(d session.UserMessage) []acp.Update {
	if !p.view.Replay && d.Steer == 0 {
		return nil
	}
	var out []acp.Update
	id := d.ID()
	for _, c := range d.Shown() {
		block := acp.TextBlock(c.Text)
		if c.Type == tools.ContentImage {
			block = acp.ContentBlock{Type: acp.BlockImage, Data: c.Data, MimeType: c.MimeType}
		}
		out = append(out, acp.UserMessageChunk{Content: block, MessageID: id})
	}
	return out
}

// planUpdates is a todo_write's list as the editor's plan.
func planUpdates(d session.Plan) []acp.Update {
	entries := make([]acp.PlanEntry, 0, len(d.Entries))
	for _, e := range d.Entries {
		entries = append(entries, acp.PlanEntry{Content: e.Content, Priority: "medium", Status: e.Status})
	}
	return []acp.Update{acp.Plan{Entries: entries}}
}

// usageUpdates is the context ring after a response: used and size, the
// cost so far and the cache figures.
func usageUpdates(d session.ContextUsage) []acp.Update {
	u := acp.UsageUpdate{Used: uint64(max(d.Used, 0)), Size: uint64(max(d.Size, 0)), Meta: usageMeta(d)}
	if d.Cost != nil {
		u.Cost = &acp.Cost{Amount: d.Cost.Amount, Currency: d.Cost.Currency}
	}
	return []acp.Update{u}
}
