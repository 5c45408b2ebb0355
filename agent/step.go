// This file is one model step: the request, the streamed answer (text,
// reasoning, tool calls as their arguments arrive), the logged message,
// and the calls paired with their ids and results.

package agent

import (
	"context"
	"sort"
	"strings"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// streamCall is one tool call of the model's answer while it streams:
// its arguments so far and the scanner that tells which members are
// complete, so the card can be shown before the whole call has arrived.
type streamCall struct {
	id, name string
	args     strings.Builder
	scan     tools.ArgsScanner
	complete bool // the ToolInput with the complete arguments was emitted
}

// arguments streams a piece of sc's arguments: a ToolInput with the
// members complete so far when the piece completed one, or once with the
// whole arguments when it closed the object.
func (t *turnRun) arguments(sc *streamCall, piece string) {
	sc.args.WriteString(piece)
	if sc.complete {
		return
	}
	changed := sc.scan.Write(piece)
	switch {
	case sc.scan.Done():
		sc.complete = true
		t.emit(session.ToolInput{Turn: t.turn, Step: t.step, CallID: sc.id, Arguments: sc.args.String(), Complete: true})
	case changed:
		t.emit(session.ToolInput{Turn: t.turn, Step: t.step, CallID: sc.id, Arguments: string(sc.scan.Members())})
	}
}

// doStep makes one model request and runs the tool calls it asks for. It
// reports whether the turn goes on with another step.
func (t *turnRun) doStep(ctx context.Context) (Outcome, bool) {
	cfg := t.a.cfg
	st := t.s.Settings()
	model := st.Model
	if model == "" {
		model = cfg.Model
	}
	req := llm.Request{
		Model:    model,
		Thinking: st.Thinking,
		Messages: append([]llm.Message{{Role: "system", Content: t.a.SystemFor(t.s)}}, History(t.s.Store.Events(), cfg.Meter.Images(model))...),
		OnRetry:  func(r llm.Retry) { tools.Notify(t.s.Tools, RetryNotice(r)) },
	}
	for _, sc := range cfg.Tools.SchemasFor(t.s.Tools) {
		if !t.s.shown(sc.Name) {
			continue
		}
		req.Tools = append(req.Tools, llm.ToolSchema{Name: sc.Name, Description: sc.Description, Parameters: sc.Parameters, Strict: sc.Strict})
	}
	ids := map[int]string{}
	names := map[int]string{}
	byIndex := map[int]*streamCall{}
	var text, reasoning strings.Builder
	resp, err := cfg.Client.Stream(ctx, req, func(d llm.Delta) {
		switch d.Kind {
		case llm.DeltaReasoning:
			reasoning.WriteString(d.Text)
			t.emit(session.AssistantChunk{Turn: t.turn, Step: t.step, Kind: session.ChunkReasoning, Text: d.Text})
		case llm.DeltaText:
			text.WriteString(d.Text)
			t.emit(session.AssistantChunk{Turn: t.turn, Step: t.step, Kind: session.ChunkText, Text: d.Text})
		case llm.DeltaToolCall:
			if _, seen := ids[d.Index]; seen {
				return
			}
			id := t.s.claimID(d.ID)
			ids[d.Index], names[d.Index] = id, d.Name
			sc := &streamCall{id: id, name: d.Name}
			byIndex[d.Index], t.streamed[id] = sc, sc
			t.open[id] = true
			t.order = append(t.order, id)
			t.emit(session.ToolStart{Turn: t.turn, Step: t.step, CallID: id, Name: d.Name})
		case llm.DeltaToolArgs:
			if sc := byIndex[d.Index]; sc != nil {
				t.arguments(sc, d.Text)
			}
		}
	})
	if err != nil {
		// Keep what was streamed: the text stays in the history.
		t.emit(session.AssistantMessage{Turn: t.turn, Step: t.step, Text: text.String(), Reasoning: reasoning.String()})
		if ctx.Err() != nil {
			return t.cancelled(), false
		}
		t.closeOpen(false, "the model request failed")
		return Outcome{Err: stepError(err, model)}, false
	}
	msg := session.AssistantMessage{Turn: t.turn, Step: t.step, Text: resp.Text, Reasoning: resp.Reasoning, FinishReason: resp.FinishReason}
	if resp.Usage != nil {
		msg.Usage = &session.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
			CacheHitTokens: resp.Usage.CacheHitTokens, ReasoningTokens: resp.Usage.ReasoningTokens}
	}
	calls := t.pairCalls(resp.ToolCalls, ids, names)
	switch resp.FinishReason {
	case "length":
		t.emitMessage(msg, model, resp.Usage)
		t.closeOpen(false, "the answer hit the output token limit before the call was complete")
		return Outcome{StopReason: session.EndMaxTokens}, false
	case "content_filter":
		t.emitMessage(msg, model, resp.Usage)
		t.closeOpen(false, "the provider's content filter stopped the answer")
		note := "\n\n[The model provider's content filter stopped this answer.]"
		t.emit(session.AssistantChunk{Turn: t.turn, Step: t.step, Kind: session.ChunkText, Text: note})
		return Outcome{StopReason: session.EndTurn}, false
	case "insufficient_system_resource":
		t.emitMessage(msg, model, resp.Usage)
		t.closeOpen(false, "the model service is overloaded")
		return Outcome{Err: &TurnError{Message: "The model service is overloaded (insufficient_system_resource); try again later.", Reason: "INSUFFICIENT_SYSTEM_RESOURCE"}}, false
	case "stop", "tool_calls", "":
	default:
		t.a.cfg.Log.Warn("agent: unknown finish_reason, ending the turn", "finish_reason", resp.FinishReason)
		if len(calls) == 0 {
			t.emitMessage(msg, model, resp.Usage)
			return Outcome{StopReason: session.EndTurn}, false
		}
	}
	msg.ToolCalls = calls
	t.emitMessage(msg, model, resp.Usage)
	if len(calls) == 0 {
		t.closeOpen(false, "the model did not finish the call")
		return Outcome{StopReason: session.EndTurn}, false
	}
	// The calls run in the model's order; a run of consecutive
	// concurrency-safe calls runs at once (see runParallel).
	for i := 0; i < len(calls); {
		if ctx.Err() != nil {
			t.notRun(calls[i:])
			return t.cancelled(), false
		}
		j := i + 1
		if t.concurrent(calls[i]) {
			for j < len(calls) && t.concurrent(calls[j]) {
				j++
			}
		}
		endTurn := ""
		if j-i > 1 {
			t.runParallel(ctx, calls[i:j])
		} else {
			endTurn = t.runOne(ctx, calls[i])
		}
		if ctx.Err() != nil {
			t.notRun(calls[j:])
			return t.cancelled(), false
		}
		if endTurn != "" {
			return t.endWith(endTurn, calls[j:]), false
		}
		i = j
	}
	t.closeOpen(false, "the call was not run")
	return Outcome{}, true
}

// emitMessage records the step's message, then, when the response
// reported its usage, the context use and the session's cumulative cost
// after it (the usage event), before any of its tool calls runs.
func (t *turnRun) emitMessage(msg session.AssistantMessage, model string, u *llm.Usage) {
	t.addUsage(msg.Usage)
	t.emit(msg)
	if u == nil {
		return
	}
	m := t.a.cfg.Meter
	ev := session.ContextUsage{Turn: t.turn, Step: t.step, Model: model,
		Used: int64(max(u.PromptTokens, 0)) + int64(max(u.CompletionTokens, 0)), Size: int64(m.Size(model))}
	ev.Cost = t.s.addCost(m, model, *u, t.a.cfg.Now())
	ev.Cache = t.cacheTokens(*u)
	ev.Calls = t.billedCalls()
	t.emit(ev)
}

// logCall emits the ToolCall event of c, once.
func (t *turnRun) logCall(c session.ToolCallRef) {
	if t.logged[c.CallID] {
		return
	}
	t.logged[c.CallID] = true
	t.emit(session.ToolCall{Turn: t.turn, Step: t.step, CallID: c.CallID, Name: c.Name, Arguments: c.Arguments})
}

// pairCalls matches the response's complete tool calls (in index order)
// with the ids announced while streaming.
func (t *turnRun) pairCalls(calls []llm.ToolCall, ids map[int]string, names map[int]string) []session.ToolCallRef {
	idx := make([]int, 0, len(ids))
	for i := range ids {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]session.ToolCallRef, 0, len(calls))
	for i, c := range calls {
		var id string
		if i < len(idx) {
			id = ids[idx[i]]
		} else {
			id = t.s.claimID(c.ID)
			t.open[id] = true
			t.order = append(t.order, id)
			t.emit(session.ToolStart{Turn: t.turn, Step: t.step, CallID: id, Name: c.Name})
		}
		name := c.Name
		if name == "" && i < len(idx) {
			name = names[idx[i]]
		}
		out = append(out, session.ToolCallRef{CallID: id, Name: name, Arguments: c.Arguments})
	}
	return out
}

// result records a tool call's result and marks the call answered;
// notRun says the call never started.
func (t *turnRun) result(id string, r tools.Result, cancelled, notRun bool) {
	delete(t.open, id)
	delete(t.streamed, id)
	t.emit(session.ToolResult{Turn: t.turn, Step: t.step, CallID: id, Content: r.Content, IsError: r.IsError,
		Error: r.Error, Meta: r.Meta, Cancelled: cancelled, NotRun: notRun, Charge: r.Charge})
	if r.Charge != nil && !r.IsError {
		t.charge(*r.Charge)
	}
}
