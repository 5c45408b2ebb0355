// This file runs one turn: its input, its outcome, the loop of model
// steps, and how a turn ends (cancelled, with calls that never ran, with
// an error).

package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Outcome is how a turn ended: an ACP stop reason, or Err when the prompt
// failed (the turn is still closed in the session).
type Outcome struct {
	StopReason string // end_turn, max_tokens, max_turn_requests, cancelled
	Err        error
	// Usage is the tokens of the turn's model requests summed (its steps
	// and any compaction it ran; turnUsage), nil when no request of the
	// turn reported usage (none was made, or none answered).
	Usage *session.Usage
}

// TurnError is a failed turn: a model failure a user can understand.
// Auth reports a missing or rejected API key.
type TurnError struct {
	Message string
	Reason  string // a short code, e.g. RATE_LIMIT, STREAM_CLOSED
	Status  int    // HTTP status when known
	Auth    bool
	Err     error
}

func (e *TurnError) Error() string { return e.Message }
func (e *TurnError) Unwrap() error { return e.Err }

// Turn runs one prompt turn with the user's content. It returns when the
// turn has ended; every event of the turn has then been emitted. When ctx
// is cancelled the turn ends promptly with StopReason "cancelled" and
// every tool call it announced is closed.
func (a *Agent) Turn(ctx context.Context, s *Session, prompt []tools.Content, title string) Outcome {
	return a.RunTurn(ctx, s, Input{Prompt: prompt, Title: title})
}

// Input is what one prompt turn starts from.
type Input struct {
	// Prompt is the user's content as the model receives it.
	Prompt []tools.Content
	// Typed, when set, is the prompt as the user wrote it, when Prompt
	// differs (a slash command expanded): it is logged beside Prompt
	// (session.UserMessage.Typed) for a replay to show.
	Typed []tools.Content
	// Title, when set, is logged as the session's title at the turn's
	// start (the first prompt's line).
	Title string
	// Compact, when set, makes the turn the user's /compact: the
	// conversation before it is summarized (compact.go) and no model
	// turn follows; Prompt is then logged as a prompt the model never
	// sees (session.UserMessage.Local).
	Compact *CompactRequest
	// AtBoundary, when set, is called at each step boundary of the
	// turn (final: the model gave its final answer, end_turn) from the
	// turn's goroutine, with no lock of the agent held: it hands over
	// the steering messages that arrived and says whether the turn ends
	// there (see Boundary).
	AtBoundary func(final bool) Boundary
	// Local, when set, makes the turn one the agent serves itself
	// without the model (e.g. the user's /undo): it runs Local with the
	// turn's number and a way to log events, and ends with the stop
	// reason it returns. Prompt is logged as a prompt the model never
	// sees (session.UserMessage.Local).
	Local func(ctx context.Context, turn int, emit func(session.Data)) string
}

// RunTurn runs one prompt turn from in, as Turn does.
func (a *Agent) RunTurn(ctx context.Context, s *Session, in Input) Outcome {
	s.mu.Lock()
	s.prepare()
	s.turn++
	turn := s.turn
	s.mu.Unlock()
	t := &turnRun{a: a, s: s, turn: turn, open: map[string]bool{}, streamed: map[string]*streamCall{}, logged: map[string]bool{},
		atBoundary: in.AtBoundary}
	store := s.Store
	t.startSeq = store.Emit(session.TurnStart{Turn: turn}).Seq
	if in.Title != "" {
		store.Emit(session.Title{Title: in.Title})
	}
	store.Emit(session.UserMessage{Turn: turn, Content: in.Prompt, Typed: in.Typed, Local: in.Compact != nil || in.Local != nil})
	var out Outcome
	switch {
	case in.Compact != nil:
		out = t.compactTurn(ctx, in.Compact.Focus)
	case in.Local != nil:
		out = Outcome{StopReason: in.Local(ctx, turn, t.emit)}
	default:
		out = t.run(ctx)
	}
	t.endChanges(ctx)
	out.Usage = t.usage
	end := session.TurnEnd{Turn: turn, Reason: out.StopReason, Usage: t.usage}
	if out.Err != nil {
		end.Reason = session.EndError
		end.Message = out.Err.Error()
		var te *TurnError
		if errors.As(out.Err, &te) {
			end.Code = te.Reason
		}
	}
	store.Emit(end)
	return out
}

// turnRun is the state of one running turn.
type turnRun struct {
	a    *Agent
	s    *Session
	turn int
	step int
	// open holds the announced tool calls that have no result yet.
	open  map[string]bool
	order []string
	// streamed holds the calls of the model's answers as they streamed;
	// logged the calls whose ToolCall event was emitted.
	streamed map[string]*streamCall
	logged   map[string]bool
	// startSeq is the Seq of the turn's TurnStart; compactTried is set
	// once the turn compacted automatically (or tried to): once per
	// turn (compact.go).
	startSeq     int64
	compactTried bool
	// usage sums the usage of the turn's responses (turnusage.go).
	usage *session.Usage
	// atBoundary is Input.AtBoundary; steered counts the steering
	// messages the turn took (boundary.go).
	atBoundary func(final bool) Boundary
	steered    int
	// billed counts the turn's billed tool calls by charge kind (the
	// usage events report it).
	billed map[string]int
}

func (t *turnRun) emit(d session.Data) { t.s.Store.Emit(d) }

func (t *turnRun) run(ctx context.Context) Outcome {
	cfg := t.a.cfg
	for t.step = 1; t.step <= cfg.MaxSteps; t.step++ {
		if ctx.Err() != nil {
			return t.cancelled()
		}
		t.autoCompact(ctx)
		if ctx.Err() != nil {
			return t.cancelled()
		}
		t.emit(session.StepStart{Turn: t.turn, Step: t.step})
		for _, n := range tools.TakeNotices(t.s.Tools) {
			t.emit(session.ContextMessage{Turn: t.turn, Text: n})
		}
		out, again := t.doStep(ctx)
		t.emit(session.StepEnd{Turn: t.turn, Step: t.step})
		// The last step allowed is no boundary: no request is left to
		// carry a steering message, which waits for a turn of its own.
		last := t.step == cfg.MaxSteps
		if !again {
			// A final answer (or a question that ended the turn) still
			// takes a steering message that came meanwhile.
			if out.Err != nil || out.StopReason != session.EndTurn || ctx.Err() != nil || last || t.boundary(true) {
				return out
			}
			continue
		}
		if !last && t.boundary(false) {
			return Outcome{StopReason: session.EndTurn}
		}
	}
	return Outcome{StopReason: session.EndMaxTurnReqs}
}

// NotRunText is the result the model gets for a call of the same
// response after a call that ended the turn (tools.Output.EndTurn).
const NotRunText = "Error: not run: the turn ended with a question to the user before this call; call it again once the user has answered, if it is still needed."

// endWith ends the turn after a call that asked for it: the calls after
// it in the response get NotRunText, and text is shown (and logged) as
// the agent's message of this step, after the results. The stop reason
// is end_turn.
func (t *turnRun) endWith(text string, rest []session.ToolCallRef) Outcome {
	for _, c := range rest {
		t.logCall(c)
		t.result(c.CallID, tools.Result{CallID: c.CallID, IsError: true, Content: []tools.Content{tools.Text(NotRunText)}}, false, true)
	}
	t.closeOpen(false, "the call was not run")
	t.emit(session.AssistantChunk{Turn: t.turn, Step: t.step, Kind: session.ChunkText, Text: text})
	t.emit(session.AssistantMessage{Turn: t.turn, Step: t.step, Text: text})
	return Outcome{StopReason: session.EndTurn}
}

// notRun closes calls the turn's cancel kept from running: each still
// gets its ToolCall, so its card shows what the model asked for, live
// and on replay, then a cancelled result.
func (t *turnRun) notRun(calls []session.ToolCallRef) {
	for _, c := range calls {
		t.logCall(c)
		t.result(c.CallID, cancelledResult(c.CallID), true, true)
	}
}

// closeOpen fails every announced call that has no result yet (none of
// them ran). A call cut off while it streamed gets its ToolCall with the
// arguments streamed so far first, so its card (the path it named, the
// command) shows on replay as it did live.
func (t *turnRun) closeOpen(cancelled bool, why string) {
	for _, id := range t.order {
		if !t.open[id] {
			continue
		}
		if sc := t.streamed[id]; sc != nil {
			t.logCall(session.ToolCallRef{CallID: id, Name: sc.name, Arguments: sc.args.String()})
		}
		r := tools.Result{CallID: id, IsError: true, Content: []tools.Content{tools.Text("Error: " + why + ".")}}
		if cancelled {
			r = cancelledResult(id)
		}
		t.result(id, r, cancelled, true)
	}
}

func (t *turnRun) cancelled() Outcome {
	t.closeOpen(true, "")
	return Outcome{StopReason: session.EndCancelled}
}

// CancelledText is the tool result the model sees for a call the user
// cancelled.
const CancelledText = "Error: cancelled by the user"

func cancelledResult(id string) tools.Result {
	return tools.Result{CallID: id, IsError: true, Content: []tools.Content{tools.Text(CancelledText)}}
}

// cancelledWith keeps what a cancelled tool produced and marks it failed.
func cancelledWith(r tools.Result) tools.Result {
	r.IsError = true
	r.Meta = nil
	if len(r.Content) == 0 {
		r.Content = []tools.Content{tools.Text(CancelledText)}
	}
	return r
}

// RetryNotice is the user notice of a model request about to be
// retried (after HTTP 429, a 5xx or no response): a warning that says
// what failed and when the next attempt comes.
func RetryNotice(r llm.Retry) tools.Notice {
	what := "The model endpoint did not answer"
	switch {
	case r.Status == 429:
		what = "The model endpoint is rate limiting requests (HTTP 429)"
	case r.Status >= 500:
		what = fmt.Sprintf("The model endpoint failed (HTTP %d)", r.Status)
	case r.Status != 0:
		what = fmt.Sprintf("The model endpoint answered HTTP %d", r.Status)
	}
	desc := fmt.Sprintf("%s: %s. Attempt %d of %d failed; retrying in %s.", what, strings.TrimSuffix(r.Message, "."),
		r.Attempt, r.MaxAttempts, r.Wait.Round(100*time.Millisecond))
	return tools.Notice{Severity: tools.NoticeWarning, Title: "Retrying the model request", Description: desc}
}

// ReasonModelNotFound is the TurnError.Reason of a turn whose model the
// endpoint does not know (llm.IsModelNotFound).
const ReasonModelNotFound = "MODEL_NOT_FOUND"

// modelError turns a model client error into a TurnError. model, when
// known, is the model the request asked for: an endpoint's refusal of
// that name says which model and where to pick another (the session's
// Model selector, --model).
func modelError(err error, model string) error {
	var le *llm.Error
	if !errors.As(err, &le) {
		return &TurnError{Message: "The model request failed: " + err.Error(), Reason: "UNKNOWN", Err: err}
	}
	te := &TurnError{Reason: le.Code, Status: le.Status, Err: err}
	switch {
	case le.Code == llm.CodeNoAPIKey:
		te.Auth = true
		te.Message = "No API key: run `dsh-acp login` in a terminal, or set DSH_API_KEY (or DEEPSEEK_API_KEY) in the agent's environment."
		if le.Err != nil {
			// The key source's own sentence (e.g. an unusable
			// credentials file, named).
			te.Message = le.Message
		}
	case le.Code == llm.CodeAuth:
		te.Auth = true
		te.Message = fmt.Sprintf("The model endpoint rejected the API key (HTTP %d: %s); run `dsh-acp login` again, or check DSH_API_KEY / DEEPSEEK_API_KEY.", le.Status, le.Message)
	case model != "" && llm.IsModelNotFound(err):
		te.Reason = ReasonModelNotFound
		te.Message = fmt.Sprintf("The model endpoint does not know the model %q (HTTP %d: %s); choose another in the session's Model selector, or start the agent with --model NAME (DSH_MODEL).", model, le.Status, le.Message)
	default:
		te.Message = le.Error()
	}
	return te
}
