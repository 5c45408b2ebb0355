// Package agent runs prompt turns: it sends the history and the tool
// schemas to the model, streams the answer, runs the tool calls the model
// asks for through the tools registry, and repeats until the model stops
// calling tools or the step limit is reached. Everything that happens is
// reported as typed session events to the session's store; the agent
// never talks ACP.
package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// DefaultMaxSteps is the number of model requests one turn may make
// (--max-steps; past it the turn ends max_turn_requests).
const DefaultMaxSteps = 64

// DefaultMaxParallel is how many concurrency-safe calls of one response
// run at once, whatever the CPU count: reads and searches wait on the
// disk and the editor more than on the CPU.
const DefaultMaxParallel = 8

// Config is what every turn needs. Client and Tools are required.
type Config struct {
	Client llm.Client
	// Tools runs every call and names the tools of each request: its
	// own, then the session's (tools.SessionTools; an MCP server's),
	// read again for every model request.
	Tools    *tools.Registry
	Model    string
	MaxSteps int // model requests per turn; <= 0 means DefaultMaxSteps
	// MaxParallel is how many concurrency-safe calls run at once; <= 0
	// means DefaultMaxParallel.
	MaxParallel int
	Log         *slog.Logger
	// System builds the system prompt for a session cwd and the
	// session's client prompt (Settings.SystemPrompt); nil uses
	// SessionSystem. SystemFor calls it.
	System func(cwd string, client ClientPrompt) string
	// Meter gives the context window and the price of a model, for the
	// usage event after each response, and whether it takes images (the
	// user's images are sent to a model only when it does, else as their
	// text form, see History); nil: the default window
	// (llm.DefaultContextWindow), no price, no images.
	Meter *llm.Meter
	// Now is the clock a response's cost is priced at (prices may
	// depend on the hour); nil means time.Now.
	Now func() time.Time
	// CompactAt is the fill of the context window (Meter.Size), as a
	// fraction (0.8 for 80 %), from which a turn first compacts the
	// conversation (see compact.go); 0 turns automatic compaction off (a
	// /compact turn, Input.Compact, still compacts).
	CompactAt float64
}

// Agent runs turns for any number of sessions; it is safe for concurrent
// use by different sessions.
type Agent struct {
	cfg Config
}

// New returns an agent with cfg.
func New(cfg Config) *Agent {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = DefaultMaxParallel
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.System == nil {
		cfg.System = SessionSystem
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Agent{cfg: cfg}
}

// Model is the model a session uses when it has chosen none
// (Config.Model); "" for a nil agent.
func (a *Agent) Model() string {
	if a == nil {
		return ""
	}
	return a.cfg.Model
}

// Settings are a session's choices for its model requests: Model (""
// means the agent's Config.Model), Thinking (DeepSeek's thinking
// fields; the zero value sends none) and SystemPrompt (the editor's
// system prompt; the zero value is none). A change applies from the next
// model request, also within a running turn.
type Settings struct {
	Model        string
	Thinking     llm.Thinking
	SystemPrompt ClientPrompt
}

// SystemFor is the system prompt of s's next model request: Config.System
// of s's cwd and client prompt. Every request made for s uses it.
func (a *Agent) SystemFor(s *Session) string {
	return a.cfg.System(s.Tools.Cwd(), s.Settings().SystemPrompt)
}

// Session is one conversation: its events and the tool state. One turn
// runs at a time per session (the caller ensures it).
type Session struct {
	Store *session.Store
	Tools tools.Session
	// Checkpoints, when set, records the project before a turn's first
	// change and reports the turn's changes at its end.
	Checkpoints Checkpointer

	mu       sync.Mutex
	ready    bool // turn, usedIDs and cost were read from the store
	turn     int
	usedIDs  map[string]bool
	settings Settings
	cost     costState
	// cachePrompt and cacheHit are the session's prompt tokens and cache
	// hits so far (session.CacheTokens), continued from the store's last
	// usage event.
	cachePrompt, cacheHit int64
	// hidden are the tools the model is not told about (Hide).
	hidden map[string]bool
	// pending are the charges of tool calls (tools.Charge) not yet added
	// to cost: the next usage event adds them.
	pending []tools.Charge
}

// costState is a session's cumulative cost: known while every response
// so far was priced in one currency (amount then sums them; currency is
// "" before the first priced one).
type costState struct {
	known    bool
	amount   float64
	currency string
}

// NewSession returns a session over store whose tools see ts. The
// store's events (the last turn number, the tool call ids used, the
// cumulative cost) are read at the first turn, so a store whose log is
// decoded lazily (a resumed session) is not decoded here.
func NewSession(store *session.Store, ts tools.Session) *Session {
	return &Session{Store: store, Tools: ts, usedIDs: map[string]bool{}}
}

// prepare reads the store's events once (s.mu held). The cumulative
// cost continues from the store's last usage event: it stays known only
// when every response with usage in the store was followed by its usage
// event and that event carried a cost (or there was none yet).
func (s *Session) prepare() {
	if s.ready {
		return
	}
	s.ready = true
	s.cost = costState{known: true}
	unaccounted := false
	for _, ev := range s.Store.Events() {
		switch d := ev.Data.(type) {
		case session.TurnStart:
			s.turn = max(s.turn, d.Turn)
		case session.ToolCall:
			s.usedIDs[d.CallID] = true
		case session.AssistantMessage:
			if d.Usage != nil {
				if unaccounted {
					s.cost.known = false
				}
				unaccounted = true
			}
		case session.ToolResult:
			if d.Charge != nil {
				s.pending = append(s.pending, *d.Charge)
			}
		case session.ContextUsage:
			unaccounted = false
			if d.Cache != nil {
				s.cachePrompt, s.cacheHit = d.Cache.SessionPrompt, d.Cache.SessionHit
			}
			s.pending = nil
			if d.Cost == nil {
				s.cost = costState{}
			} else if s.cost.known {
				s.cost.amount, s.cost.currency = d.Cost.Amount, d.Cost.Currency
			}
		default:
			// Only the turn count, the call ids and the cost carry over.
		}
	}
	if unaccounted {
		s.cost.known = false
	}
}

// SetSettings replaces the session's settings; the next model request
// uses them.
func (s *Session) SetSettings(st Settings) {
	s.mu.Lock()
	s.settings = st
	s.mu.Unlock()
}

// Settings returns the session's settings.
func (s *Session) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// model is the model s's requests go to: its setting, else def (the
// agent's Config.Model).
func (s *Session) model(def string) string {
	if m := s.Settings().Model; m != "" {
		return m
	}
	return def
}

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

// concurrent reports whether c's tool declares itself concurrency-safe
// (an unknown tool is not: it runs alone, and fails).
func (t *turnRun) concurrent(c session.ToolCallRef) bool {
	tool, ok := t.a.cfg.Tools.Lookup(t.s.Tools, c.Name)
	return ok && tool.ConcurrencySafe
}

// exec is the tools.Exec of call c; onStart, when set, runs after the
// ToolExec event when the call passed every middleware.
func (t *turnRun) exec(c session.ToolCallRef, onStart func()) *tools.Exec {
	return &tools.Exec{CallID: c.CallID, Name: c.Name, Args: []byte(c.Arguments), Session: t.s.Tools,
		OnStart: func() {
			t.emit(session.ToolExec{CallID: c.CallID})
			if onStart != nil {
				onStart()
			}
		},
		OnPreview: func(v tools.ToolCallView) {
			if d, ok := v.(tools.DiffCall); ok {
				t.emit(session.ToolPreview{CallID: c.CallID, Preview: d})
			}
		},
		Progress: func(p tools.Progress) {
			t.emit(session.ToolProgress{CallID: c.CallID, Progress: p})
			if p.Plan != nil {
				t.emit(session.Plan{CallID: c.CallID, Entries: p.Plan})
			}
		}}
}

// runOne runs one call alone and records its result (marked cancelled
// when the turn was cancelled meanwhile, and not run when that happened
// before it passed its middlewares). It returns the result's EndTurn
// message ("" when the call does not end the turn).
func (t *turnRun) runOne(ctx context.Context, c session.ToolCallRef) string {
	t.logCall(c)
	started := false
	res := t.a.cfg.Tools.Execute(ctx, t.exec(c, func() {
		started = true
		t.beforeChange(ctx, c)
	}))
	if ctx.Err() != nil {
		t.result(c.CallID, cancelledWith(res), true, !started)
		return ""
	}
	t.result(c.CallID, res, false, false)
	return res.EndTurn
}

// parallelSlot is one call of a parallel run.
type parallelSlot struct {
	passed   chan struct{} // closed once the call passed its middlewares or ended
	passOnce sync.Once
	done     chan struct{} // closed once res is set, or the call will never run
	res      tools.Result
	// cancelled: the turn was cancelled when the call ended; notRun: it
	// was cancelled before the call started; started: the call passed
	// its middlewares and ran.
	cancelled, notRun, started bool
}

func (p *parallelSlot) pass() { p.passOnce.Do(func() { close(p.passed) }) }

// runParallel runs calls (consecutive concurrency-safe calls of one
// response) at once, at most cfg.MaxParallel in flight. Every card is
// announced first, in the model's order. A call starts once the call
// before it has passed its middlewares (or ended), so the permission
// prompts of the run are asked one at a time, in order; the calls then
// overlap. The results are recorded in the model's order, each as soon
// as it and those before it are done, so the log (and a session/load
// replay) keeps that order. A cancel stops the calls not yet started
// (their cards close as cancelled), reaches the running ones through
// ctx, and waits for them; every call's card is closed before it
// returns.
func (t *turnRun) runParallel(ctx context.Context, calls []session.ToolCallRef) {
	for _, c := range calls {
		t.logCall(c)
	}
	slots := make([]*parallelSlot, len(calls))
	for k := range slots {
		slots[k] = &parallelSlot{passed: make(chan struct{}), done: make(chan struct{})}
	}
	sem := make(chan struct{}, t.a.cfg.MaxParallel)
	var workers sync.WaitGroup
	launcher := make(chan struct{})
	go func() {
		defer close(launcher)
		for k, c := range calls {
			if k > 0 {
				select {
				case <-slots[k-1].passed:
				case <-ctx.Done():
				}
			}
			if ctx.Err() == nil {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				for _, rest := range slots[k:] {
					rest.notRun = true
					close(rest.done)
				}
				return
			}
			slot := slots[k]
			workers.Go(func() {
				defer func() { <-sem }()
				res := t.a.cfg.Tools.Execute(ctx, t.exec(c, func() { slot.started = true; slot.pass() }))
				slot.res, slot.cancelled = res, ctx.Err() != nil
				slot.pass()
				close(slot.done)
			})
		}
	}()
	for k, c := range calls {
		slot := slots[k]
		<-slot.done
		switch {
		case slot.notRun:
			t.result(c.CallID, cancelledResult(c.CallID), true, true)
		case slot.cancelled:
			t.result(c.CallID, cancelledWith(slot.res), true, !slot.started)
		default:
			t.result(c.CallID, slot.res, false, false)
		}
	}
	<-launcher
	workers.Wait()
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

// addCost adds a response's cost to the session's cumulative cost and
// returns the total, nil once any response could not be priced (its
// model has no known price, or another currency than the earlier ones).
func (s *Session) addCost(m *llm.Meter, model string, u llm.Usage, at time.Time) *session.Cost {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := m.Price(model)
	if !ok || !s.cost.known || (s.cost.currency != "" && s.cost.currency != p.Currency) {
		s.cost, s.pending = costState{}, nil
		return nil
	}
	// Rounded to 1e-10 (a ten-billionth of the currency unit) so that
	// sums read as the prices do, not as binary fractions.
	amount := s.cost.amount + p.Cost(u, at)
	if !s.addPending(&amount, p.Currency) {
		s.cost = costState{}
		return nil
	}
	s.cost.amount = math.Round(amount*1e10) / 1e10
	s.cost.currency = p.Currency
	return &session.Cost{Amount: s.cost.amount, Currency: s.cost.currency}
}

// logCall emits the ToolCall event of c, once.
func (t *turnRun) logCall(c session.ToolCallRef) {
	if t.logged[c.CallID] {
		return
	}
	t.logged[c.CallID] = true
	t.emit(session.ToolCall{Turn: t.turn, Step: t.step, CallID: c.CallID, Name: c.Name, Arguments: c.Arguments})
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

// claimID returns the model's id when it is non-empty and unused in the
// session, else a fresh "call_<random>" id, and marks it used.
func (s *Session) claimID(modelID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prepare()
	id := modelID
	for id == "" || s.usedIDs[id] {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = "call_" + hex.EncodeToString(b[:])
	}
	s.usedIDs[id] = true
	return id
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

// modelError turns a model client error into a TurnError.
func modelError(err error) error {
	var le *llm.Error
	if !errors.As(err, &le) {
		return &TurnError{Message: "The model request failed: " + err.Error(), Reason: "UNKNOWN", Err: err}
	}
	te := &TurnError{Reason: le.Code, Status: le.Status, Err: err}
	switch le.Code {
	case "NO_API_KEY":
		te.Auth = true
		te.Message = "No API key: run `dsh-acp login` in a terminal, or set DSH_API_KEY (or DEEPSEEK_API_KEY) in the agent's environment."
		if le.Err != nil {
			// The key source's own sentence (e.g. an unusable
			// credentials file, named).
			te.Message = le.Message
		}
	case "AUTH":
		te.Auth = true
		te.Message = fmt.Sprintf("The model endpoint rejected the API key (HTTP %d: %s); run `dsh-acp login` again, or check DSH_API_KEY / DEEPSEEK_API_KEY.", le.Status, le.Message)
	default:
		te.Message = le.Error()
	}
	return te
}
