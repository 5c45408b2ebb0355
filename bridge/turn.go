// This file serves session/prompt: a prompt starts its session's turn (or
// waits behind the running one, queue.go), the turn runs, and its answer
// maps the outcome to a stop reason or a JSON-RPC error.

package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Prompt implements acp.Agent. On the read goroutine it validates the
// prompt and registers the turn (so a session/cancel read next finds it);
// the turn itself runs in the returned function.
func (b *Bridge) Prompt(ctx context.Context, p acp.PromptRequest) (acp.Deferred[acp.PromptResponse], error) {
	s := b.session(p.SessionID)
	if s == nil {
		return nil, b.notHere(p.SessionID)
	}
	if log := s.agent.Store.Log(); log != nil {
		// A session only created here holds no lock: another process may
		// have taken it over since.
		err := log.Claim()
		if le := lockedError(s.id, err); le != nil {
			return nil, le
		}
		if errors.Is(err, session.ErrContinued) {
			return nil, &acp.Error{Code: acp.CodeInternalError, Data: map[string]any{"reason": "LOG_CONTINUED"},
				Message: fmt.Sprintf("Internal error: session %s was continued by another process; load it again to go on here", s.id)}
		}
	}
	if b.loads.busy(p.SessionID) {
		return nil, acp.InvalidParams("Invalid params: session %s is being loaded", p.SessionID)
	}
	content, err := promptContent(p.Prompt, b.imagePolicy(s))
	if err != nil {
		return nil, err
	}
	// Without a key the prompt is refused before anything is logged: the
	// editor shows its login banner and the same prompt can be sent again.
	if err := b.checkAuth(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.cancel != nil {
		// A turn runs: the prompt waits for it (queue.go). A slash
		// command the session offers does not steer: it runs as its own
		// turn, as it would have (/compact, /review need one).
		defer s.mu.Unlock()
		return b.enqueue(ctx, s, content, steeringMeta(p.Meta) && !s.offersCommand(content))
	}
	turnCtx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	s.turns++
	first := s.turns == 1 // the first here: logPromptTitle checks the log
	s.mu.Unlock()
	return func(ctx context.Context) (acp.PromptResponse, error) {
		return b.runTurn(ctx, turnCtx, cancel, s, content, first)
	}, nil
}

// runTurn runs the turn of a prompt of s with content under turnCtx
// (cancel is its cancel) and answers it; ctx is the request's. When it
// ends, the session's next waiting prompt starts (queue.go).
func (b *Bridge) runTurn(ctx, turnCtx context.Context, cancel context.CancelFunc, s *liveSession, content []tools.Content, first bool) (resp acp.PromptResponse, err error) {
	defer func() {
		s.fails.end()
		next := s.turnEnded(promptResult{resp: resp, err: err})
		cancel()
		b.releaseLog(s)
		// The next waiting prompt's turn starts once this answer is
		// written (every update of this turn is before it); a close
		// meanwhile dropped it, and the log is released then.
		start := func() {
			s.startNext()
			b.releaseIfIdle(s)
		}
		if next && !acp.After(ctx, start) {
			start()
		}
	}()
	if !s.notices {
		b.turnFailures(s)
	}
	// A resumed session's log is decoded here, at its first turn.
	if err := s.agent.Store.Ready(); err != nil {
		return acp.PromptResponse{}, logError(s.id, "LOG_CORRUPT", err)
	}
	b.migrateModel(s)
	b.checkBalance(s)
	in, err := b.prepareTurn(turnCtx, s, content)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	if first {
		b.logPromptTitle(s, content)
	}
	in.AtBoundary = s.atBoundary
	restore := s.perm.runUnder(in.rules)
	out := b.cfg.Agent.RunTurn(turnCtx, s.agent, in.Input)
	restore()
	b.flushLog(s)
	if out.Err != nil {
		return acp.PromptResponse{}, promptError(out.Err)
	}
	b.titleAfter(ctx, s)
	return acp.PromptResponse{StopReason: acp.StopReason(out.StopReason), Usage: promptUsage(out.Usage)}, nil
}

// promptError maps a failed turn to its JSON-RPC error: -32000 for a
// missing or refused key, -32603 with the reason otherwise.
func promptError(err error) error {
	var te *agent.TurnError
	if errors.As(err, &te) {
		if te.Auth {
			return &acp.Error{Code: acp.CodeAuthRequired, Message: te.Message, Data: errData(te)}
		}
		return &acp.Error{Code: acp.CodeInternalError, Message: te.Message, Data: errData(te)}
	}
	return &acp.Error{Code: acp.CodeInternalError, Message: "Internal error: " + err.Error()}
}

func errData(te *agent.TurnError) map[string]any {
	d := map[string]any{"reason": te.Reason}
	if te.Status != 0 {
		d["status"] = te.Status
	}
	return d
}

// Title is a thread title from a prompt: its first non-empty line, at most
// 80 characters (runes), cut with "…".
func Title(content []tools.Content) string {
	for _, c := range content {
		for _, line := range strings.Split(c.Text, "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if r := []rune(line); len(r) > 80 {
				return string(r[:79]) + "…"
			}
			return line
		}
	}
	return ""
}
