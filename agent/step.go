// This file is one model step: the request, the streamed answer (text,
// reasoning, tool calls as their arguments arrive), the logged message,
// and the calls paired with their ids and results.

package agent

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
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
	complete bool           // the ToolInput with the complete arguments was emitted
	pending  *tools.Pending // the call's tool, looked up when the model named it
	call     *tools.Call    // the call resolved from the complete arguments
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
		args := sc.args.String()
		sc.call = sc.pending.Resolve(json.RawMessage(args))
		t.emit(session.ToolInput{Turn: t.turn, Step: t.step, CallID: sc.id, Arguments: args, Complete: true, Call: sc.call})
	case changed:
		t.emit(session.ToolInput{Turn: t.turn, Step: t.step, CallID: sc.id, Arguments: string(sc.scan.Members())})
	}
}

// doStep makes one model step: the request, the streamed answer, the
// finish reason, then the tool calls it asks for. It reports whether the
// turn goes on with another step.
func (t *turnRun) doStep(ctx context.Context) (Outcome, bool) {
	req, model := t.request()
	st := &stepStream{t: t, byIndex: map[int]*streamCall{}}
	resp, err := t.a.cfg.Client.Stream(ctx, req, st.delta)
	if err != nil {
		// Keep what was streamed: the text stays in the history.
		t.emit(session.AssistantMessage{Turn: t.turn, Step: t.step, Text: st.text.String(), Reasoning: st.reasoning.String()})
		if ctx.Err() != nil {
			return t.cancelled(), false
		}
		t.closeOpen(false, "the model request failed")
		return Outcome{Err: modelError(err, model)}, false
	}
	msg := session.AssistantMessage{Turn: t.turn, Step: t.step, Text: resp.Text, Reasoning: resp.Reasoning, FinishReason: resp.FinishReason}
	if resp.Usage != nil {
		msg.Usage = &session.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
			CacheHitTokens: resp.Usage.CacheHitTokens, ReasoningTokens: resp.Usage.ReasoningTokens}
	}
	calls := t.pairCalls(resp.ToolCalls, st.byIndex)
	if rule, ok := finishRules[resp.FinishReason]; ok {
		t.emitMessage(msg, model, resp.Usage)
		t.closeOpen(false, rule.why)
		if rule.note != "" {
			t.emit(session.AssistantChunk{Turn: t.turn, Step: t.step, Kind: session.ChunkText, Text: rule.note})
		}
		return rule.outcome(), false
	}
	switch resp.FinishReason {
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
	return t.runCalls(ctx, calls)
}

// finishRule is how a step ends for a finish reason that ends the turn
// at once: why the calls still open are closed, a note added to the
// answer ("" for none), and the turn's outcome.
type finishRule struct {
	why, note string
	outcome   func() Outcome
}

// finishRules are the finish reasons that end the turn at once; "stop",
// "tool_calls" and "" go on to the calls, any other ends the turn after
// a log line (running calls the model completed).
var finishRules = map[string]finishRule{
	"length": {why: "the answer hit the output token limit before the call was complete",
		outcome: func() Outcome { return Outcome{StopReason: session.EndMaxTokens} }},
	"content_filter": {why: "the provider's content filter stopped the answer",
		note:    "\n\n[The model provider's content filter stopped this answer.]",
		outcome: func() Outcome { return Outcome{StopReason: session.EndTurn} }},
	"insufficient_system_resource": {why: "the model service is overloaded",
		outcome: func() Outcome {
			return Outcome{Err: &TurnError{Message: "The model service is overloaded (insufficient_system_resource); try again later.", Reason: "INSUFFICIENT_SYSTEM_RESOURCE"}}
		}},
}

// request builds the step's model request (the session's model and
// thinking, the system prompt, the history with the events logged since
// the last request folded in, the tools the model is shown) and returns
// it with the model's name.
func (t *turnRun) request() (llm.Request, string) {
	cfg := t.a.cfg
	st := t.s.Settings()
	model := t.s.model(cfg.Model)
	req := llm.Request{
		Model:    model,
		Thinking: st.Thinking,
		Messages: t.s.history.messages(t.s.Store, cfg.Meter.Images(model), llm.Message{Role: "system", Content: t.a.SystemFor(t.s)}),
		OnRetry:  func(r llm.Retry) { tools.Notify(t.s.Tools, RetryNotice(r)) },
	}
	for _, sc := range cfg.Tools.SchemasFor(t.s.Tools) {
		if !t.s.shown(sc.Name) {
			continue
		}
		req.Tools = append(req.Tools, llm.ToolSchema{Name: sc.Name, Description: sc.Description, Parameters: sc.Parameters, Strict: sc.Strict})
	}
	return req, model
}

// stepStream is what one step's stream has given so far: the text and
// reasoning (kept for a request that fails midway), and the calls by the
// model's index (each with the id given it and its name).
type stepStream struct {
	t               *turnRun
	byIndex         map[int]*streamCall
	text, reasoning strings.Builder
}

// delta handles one piece of the stream: chunks of text and reasoning
// go out as they come, a call is announced at its first fragment and its
// arguments are scanned as they stream.
func (st *stepStream) delta(d llm.Delta) {
	t := st.t
	switch d.Kind {
	case llm.DeltaReasoning:
		st.reasoning.WriteString(d.Text)
		t.emit(session.AssistantChunk{Turn: t.turn, Step: t.step, Kind: session.ChunkReasoning, Text: d.Text})
	case llm.DeltaText:
		st.text.WriteString(d.Text)
		t.emit(session.AssistantChunk{Turn: t.turn, Step: t.step, Kind: session.ChunkText, Text: d.Text})
	case llm.DeltaToolCall:
		if _, seen := st.byIndex[d.Index]; seen {
			return
		}
		id := t.s.claimID(d.ID)
		sc := &streamCall{id: id, name: d.Name, pending: t.a.cfg.Tools.Pending(t.s.Tools, id, d.Name)}
		st.byIndex[d.Index], t.streamed[id] = sc, sc
		t.open[id] = true
		t.order = append(t.order, id)
		t.emit(session.ToolStart{Turn: t.turn, Step: t.step, CallID: id, Name: d.Name, Pending: sc.pending})
	case llm.DeltaToolArgs:
		if sc := st.byIndex[d.Index]; sc != nil {
			t.arguments(sc, d.Text)
		}
	}
}

// runCalls runs the step's calls in the model's order; a run of
// consecutive concurrency-safe calls runs at once (see runParallel). It
// reports whether the turn goes on.
func (t *turnRun) runCalls(ctx context.Context, calls []session.ToolCallRef) (Outcome, bool) {
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
	t.emit(session.ToolCall{Turn: t.turn, Step: t.step, CallID: c.CallID, Name: c.Name, Arguments: c.Arguments, Call: c.Call})
}

// pairCalls matches the response's complete tool calls (in index order)
// with the ids announced while streaming.
func (t *turnRun) pairCalls(calls []llm.ToolCall, streamed map[int]*streamCall) []session.ToolCallRef {
	idx := slices.Sorted(maps.Keys(streamed))
	out := make([]session.ToolCallRef, 0, len(calls))
	for i, c := range calls {
		var id string
		if i < len(idx) {
			id = streamed[idx[i]].id
		} else {
			id = t.s.claimID(c.ID)
			t.open[id] = true
			t.order = append(t.order, id)
			t.emit(session.ToolStart{Turn: t.turn, Step: t.step, CallID: id, Name: c.Name})
		}
		name := c.Name
		if name == "" && i < len(idx) {
			name = streamed[idx[i]].name
		}
		var sc *streamCall
		if i < len(idx) {
			sc = streamed[idx[i]]
		}
		out = append(out, session.ToolCallRef{CallID: id, Name: name, Arguments: c.Arguments, Call: t.resolvedAs(sc, id, name, c.Arguments)})
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
