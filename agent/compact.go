package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Compaction: when the context a turn is about to send fills
// Config.CompactAt of the model's window (the last response's prompt
// plus completion tokens, the context the next request starts from), or
// when the user asks (/compact, Input.Compact), the model is asked for a
// summary of the conversation so far, and from then on the requests
// carry the summary instead of the messages it stands for (History);
// the log keeps every event.
//
// The summary request is the turn's own request (the session's model
// and thinking level, the same system prompt, tool schemas and
// messages, so the endpoint's prompt cache serves its prefix) plus one
// user message asking for the summary (SummaryRequest). Its usage is
// logged with the compaction, and a usage event follows a completed
// one: its cost joins the session's, and the context it reports is the
// summary's tokens (what the conversation holds now) until the next
// response measures the whole request. What it stands for: at a turn's first step, every
// event before the turn (the new prompt stays as the user wrote it); at
// a later step, everything so far (the summary then says where the turn
// stands). A compaction that fails (the request fails, is cut at the
// output limit, or gives no text) or is cancelled changes nothing the
// model sees; it is logged with its reason, and the user is told
// (tools.Notify). An automatic compaction is tried once per turn.

// CompactRequest is the user's /compact: Focus ("" for none) is what
// the summary should dwell on (the text after the command).
type CompactRequest struct {
	Focus string
}

// SummaryRequest is the instruction the summary request ends with; focus
// ("" for none) is added as what to dwell on.
func SummaryRequest(focus string) string {
	var b strings.Builder
	b.WriteString(`The conversation so far is about to be replaced by a summary you write now, to free the context window. Do not call any tool: answer with the summary only.

Write what someone continuing this work needs:
- the user's requests and goals, in their words where they matter;
- the files read, created or changed (with their paths) and what changed in them;
- decisions taken and why; constraints and preferences the user stated;
- commands run whose outcome matters (builds, tests), errors met and how they were solved;
- what is still open, and the next step (when a request is in progress, exactly where it stands).
Be complete but concise; use short Markdown lists.`)
	if f := strings.TrimSpace(focus); f != "" {
		b.WriteString("\n\nFocus especially on: ")
		b.WriteString(f)
	}
	return b.String()
}

// SummaryMessage is the user message that stands, in later requests,
// for the messages a compaction summarized.
func SummaryMessage(summary string) string {
	return "[The earlier part of this conversation was compacted to fit the context window; the session log keeps all of it. Its summary follows.]\n\n" + summary
}

// window is the context window of model, in tokens (Config.Meter's;
// llm.DefaultContextWindow without one).
func (a *Agent) window(model string) int { return a.cfg.Meter.Size(model) }

// contextUsed is the context the last response of events left (its
// prompt plus completion tokens), and false when no response with usage
// came after the last completed compaction (or at all).
func contextUsed(events []session.Event) (int, bool) {
	used, ok := 0, false
	for i := len(events) - 1; i >= 0 && !usedIn(events[i], &used, &ok); i-- {
	}
	return used, ok
}

// storeUsed is contextUsed of store's events, read in place.
func storeUsed(store *session.Store) (int, bool) {
	used, ok := 0, false
	store.Backward(func(ev session.Event) bool { return !usedIn(ev, &used, &ok) })
	return used, ok
}

// usedIn reads ev for contextUsed, newest first: it reports true when
// the answer is known (a response with usage sets used and ok; a
// completed compaction means none since).
func usedIn(ev session.Event, used *int, ok *bool) bool {
	switch d := ev.Data.(type) {
	case session.Compaction:
		return d.Status == session.CompactionCompleted
	case session.AssistantMessage:
		if d.Usage != nil {
			*used, *ok = max(d.Usage.PromptTokens, 0)+max(d.Usage.CompletionTokens, 0), true
			return true
		}
	default:
		// Only responses measure the context, and only a completed
		// compaction replaces it; the other events say nothing of it.
	}
	return false
}

// autoCompact compacts before the turn's next model request when the
// context passed the threshold (once per turn).
func (t *turnRun) autoCompact(ctx context.Context) {
	cfg := t.a.cfg
	if cfg.CompactAt <= 0 || t.compactTried {
		return
	}
	used, ok := storeUsed(t.s.Store)
	if !ok {
		return
	}
	window := t.a.window(t.s.model(cfg.Model))
	if float64(used) < cfg.CompactAt*float64(window) {
		return
	}
	t.compactTried = true
	events := t.s.Store.Events()
	before := t.startSeq
	if t.step > 1 {
		before = int64(len(events)) // the Seq the next logged event gets
	}
	cfg.Log.Info("agent: the context passed the compaction threshold", "used", used, "window", window, "threshold", cfg.CompactAt)
	t.compact(ctx, events, before, true, "")
}

// compactTurn is the user's /compact: every event before the turn is
// summarized. The turn ends end_turn whether the compaction succeeded
// or failed (the user is told why), cancelled when it was cancelled.
func (t *turnRun) compactTurn(ctx context.Context, focus string) Outcome {
	if c := t.compact(ctx, t.s.Store.Events(), t.startSeq, false, focus); c.Status == session.CompactionCancelled {
		return Outcome{StopReason: session.EndCancelled}
	}
	return Outcome{StopReason: session.EndTurn}
}

// compact summarizes the events of events before the Seq before and
// logs the outcome (a session.Compaction, which it returns).
func (t *turnRun) compact(ctx context.Context, events []session.Event, before int64, auto bool, focus string) session.Compaction {
	cfg := t.a.cfg
	c := session.Compaction{ID: newCompactionID(), Turn: t.turn, Before: before, Auto: auto, Focus: strings.TrimSpace(focus)}
	t.emit(session.CompactionStart{ID: c.ID, Turn: t.turn, Auto: auto})
	st := t.s.Settings()
	model := t.s.model(cfg.Model)
	// The history as the turn's own request would carry it (images only
	// to a model that takes them), so the endpoint's cache serves it.
	sys := llm.Message{Role: "system", Content: t.a.SystemFor(t.s)}
	msgs := History(eventsBefore(events, before), cfg.Meter.Images(model), sys)
	if hist := msgs[1:]; len(hist) == 0 || len(hist) == 1 && lastCompactionStandsAlone(events, before) {
		c.Status, c.Error = session.CompactionFailed, "there is nothing to compact yet"
		return t.endCompaction(c)
	}
	req := llm.Request{
		Model:    model,
		Thinking: st.Thinking,
		Messages: append(msgs, llm.Message{Role: "user", Content: SummaryRequest(focus)}),
		OnRetry:  func(r llm.Retry) { tools.Notify(t.s.Tools, RetryNotice(r)) },
	}
	for _, sc := range cfg.Tools.SchemasFor(t.s.Tools) {
		req.Tools = append(req.Tools, llm.ToolSchema{Name: sc.Name, Description: sc.Description, Parameters: sc.Parameters, Strict: sc.Strict})
	}
	var streamed strings.Builder
	resp, err := cfg.Client.Stream(ctx, req, func(d llm.Delta) {
		if d.Kind == llm.DeltaText {
			streamed.WriteString(d.Text)
			t.emit(session.CompactionChunk{ID: c.ID, Text: d.Text})
		}
	})
	c.Summary = streamed.String()
	if resp != nil && resp.Usage != nil {
		c.Usage = &session.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
			CacheHitTokens: resp.Usage.CacheHitTokens, ReasoningTokens: resp.Usage.ReasoningTokens}
		t.addUsage(c.Usage)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		c.Status = session.CompactionCancelled
	case err != nil:
		c.Status, c.Error = session.CompactionFailed, modelError(err, "").Error()
	case resp.FinishReason == "length":
		c.Status, c.Error = session.CompactionFailed, "the summary hit the output token limit before it was complete"
	case strings.TrimSpace(resp.Text) == "" && len(resp.ToolCalls) > 0:
		c.Status, c.Error = session.CompactionFailed, "the model called a tool instead of writing the summary"
	case strings.TrimSpace(resp.Text) == "":
		c.Status, c.Error = session.CompactionFailed, "the model wrote no summary"
	default:
		c.Status, c.Summary = session.CompactionCompleted, resp.Text
	}
	t.endCompaction(c)
	if resp != nil && resp.Usage != nil {
		// Paid for either way; a failed one's cost shows with the next
		// usage event.
		u := *resp.Usage
		cost := t.s.addCost(cfg.Meter, model, u, cfg.Now())
		if c.Status == session.CompactionCompleted {
			t.emit(session.ContextUsage{Turn: t.turn, Step: t.step, Model: model,
				Used: int64(max(u.CompletionTokens-u.ReasoningTokens, 0)), Size: int64(cfg.Meter.Size(model)), Cost: cost})
		}
	}
	return c
}

// lastCompactionStandsAlone reports whether the only message before
// before is the summary of an earlier compaction (nothing new to
// compact).
func lastCompactionStandsAlone(events []session.Event, before int64) bool {
	_, ok := lastCompaction(eventsBefore(events, before))
	return ok
}

// endCompaction logs c and tells the user when it did not complete.
func (t *turnRun) endCompaction(c session.Compaction) session.Compaction {
	t.emit(c)
	log := t.a.cfg.Log
	switch c.Status {
	case session.CompactionCompleted:
		log.Info("agent: compacted the conversation", "compaction", c.ID, "auto", c.Auto, "summaryBytes", len(c.Summary))
	case session.CompactionFailed:
		log.Warn("agent: compaction failed; the conversation is unchanged", "compaction", c.ID, "err", c.Error)
		tools.Notify(t.s.Tools, tools.Notice{Severity: tools.NoticeWarning, Title: "Compaction failed",
			Description: fmt.Sprintf("The conversation could not be compacted: %s. It is unchanged; the model still gets every message.", strings.TrimSuffix(c.Error, "."))})
	case session.CompactionCancelled:
		log.Info("agent: compaction cancelled; the conversation is unchanged", "compaction", c.ID)
	}
	return c
}

// newCompactionID is a fresh compaction id ("cmp_" and 24 hex digits).
func newCompactionID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "cmp_" + hex.EncodeToString(b[:])
}
