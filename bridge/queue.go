package bridge

import (
	"context"
	"encoding/json"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/tools"
)

// DefaultPromptQueue is how many prompts a session holds waiting behind
// its running turn when Config.PromptQueue is not set; one more is
// refused (-32602).
const DefaultPromptQueue = 8

// promptQueueingMeta is initialize's agentCapabilities._meta: prompts
// sent while a turn runs are queued (the pinned schema has no
// capability of its own for it).
var promptQueueingMeta = json.RawMessage(`{"promptQueueing":true}`)

// waitingPrompt is a session/prompt accepted while its session's turn
// was running. Its request waits on done, closed once: when its own
// turn starts (turnCtx set), when a cancel dropped it (cancelled), or,
// for a steering prompt the running turn took, when that turn ended
// (res set).
type waitingPrompt struct {
	ctx     context.Context // the request's
	content []tools.Content
	// steer: the prompt asked to be added to the running turn
	// (_meta.steering true) rather than wait for its own.
	steer bool

	done      chan struct{}
	turnCtx   context.Context
	cancel    context.CancelFunc // turnCtx's
	first     bool               // its turn is the session's first here
	cancelled bool
	res       promptResult
}

// promptResult is how a prompt request is answered.
type promptResult struct {
	resp acp.PromptResponse
	err  error
}

// turnQueue is the turn runner's state of one session beyond its running
// turn (liveSession.cancel), guarded by liveSession.mu. One turn runs at
// a time: a prompt that arrives while one runs waits here, and the turn
// ends at its next step boundary for it (agent.Boundary.End); the turn
// that ends starts the first waiting prompt's turn before the session
// counts as idle, so nothing can slip in between.
type turnQueue struct {
	// waiting are the prompts accepted while the turn ran, in arrival
	// order (steering ones included until a boundary takes them).
	waiting []*waitingPrompt
	// riders are the steering prompts the running turn took: they are
	// answered as that turn is.
	riders []*waitingPrompt
	// final: the running turn passed its last boundary (the model's
	// final answer, no steering message to take): a steering prompt
	// sent now waits for a turn of its own.
	final bool
}

// steeringMeta reports whether a prompt's _meta asks to steer the
// running turn (`"steering": true`, the shape claude-agent-acp reads).
func steeringMeta(meta acp.Meta) bool {
	var m struct {
		Steering bool `json:"steering"`
	}
	return len(meta) > 0 && json.Unmarshal(meta, &m) == nil && m.Steering
}

// enqueue accepts content while s's turn runs (s.mu held): -32602 past
// the bound, else a request that waits for its turn (or for the turn
// that takes it, when it steers).
func (b *Bridge) enqueue(ctx context.Context, s *liveSession, content []tools.Content, steer bool) (acp.Deferred[acp.PromptResponse], error) {
	bound := b.cfg.PromptQueue
	if bound <= 0 {
		bound = DefaultPromptQueue
	}
	if len(s.queue.waiting) >= bound {
		return nil, acp.InvalidParams("Invalid params: session %s already has %d prompts waiting behind its running turn (the bound, --prompt-queue %d)", s.id, len(s.queue.waiting), bound)
	}
	w := &waitingPrompt{ctx: ctx, content: content, steer: steer && !s.queue.final, done: make(chan struct{})}
	s.queue.waiting = append(s.queue.waiting, w)
	return func(ctx context.Context) (acp.PromptResponse, error) {
		select {
		case <-w.done:
		case <-ctx.Done():
			// The request was cancelled ($/cancel_request, shutdown):
			// dropped while it waits; once its turn has started, that
			// turn ends as a cancelled one does.
			if s.dropWaiting(w) {
				return acp.PromptResponse{StopReason: acp.StopCancelled}, nil
			}
			<-w.done
		}
		switch {
		case w.cancelled:
			return acp.PromptResponse{StopReason: acp.StopCancelled}, nil
		case w.turnCtx == nil:
			return w.res.resp, w.res.err
		}
		return b.runTurn(ctx, w.turnCtx, w.cancel, s, w.content, w.first)
	}, nil
}

// atBoundary is the running turn's agent.Input.AtBoundary: it hands the
// turn the steering prompts waiting and ends the turn when another
// prompt waits behind it.
func (s *liveSession) atBoundary(final bool) agent.Boundary {
	s.mu.Lock()
	defer s.mu.Unlock()
	var bd agent.Boundary
	var rest []*waitingPrompt
	for _, w := range s.queue.waiting {
		if w.steer {
			bd.Steer = append(bd.Steer, w.content)
			s.queue.riders = append(s.queue.riders, w)
		} else {
			rest = append(rest, w)
		}
	}
	s.queue.waiting = rest
	bd.End = len(rest) > 0
	if final && len(bd.Steer) == 0 {
		s.queue.final = true
	}
	return bd
}

// turnEnded answers the steering prompts s's turn took with its answer
// and makes s idle when no prompt waits. It reports whether one waits:
// then s stays busy until startNext, which the caller runs once the
// turn's own answer is written, so nothing of the next turn reaches the
// editor before it.
func (s *liveSession) turnEnded(res promptResult) (next bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.queue.riders {
		w.res = res
		close(w.done)
	}
	s.queue.riders, s.queue.final = nil, false
	if len(s.queue.waiting) == 0 {
		s.cancel = nil
		return false
	}
	return true
}

// startNext starts the next waiting prompt's turn (a steering prompt
// no turn took runs as a turn of its own), or makes s idle when none
// is left.
func (s *liveSession) startNext() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel = nil
	for len(s.queue.waiting) > 0 && s.cancel == nil {
		w := s.queue.waiting[0]
		s.queue.waiting = s.queue.waiting[1:]
		if w.ctx.Err() != nil {
			// Its request was cancelled: no turn is logged for it.
			w.cancelled = true
		} else {
			w.turnCtx, w.cancel = context.WithCancel(w.ctx)
			s.cancel = w.cancel
			s.turns++
			w.first = s.turns == 1
		}
		close(w.done)
	}
}

// dropWaiting removes w from s's waiting prompts and reports whether it
// was still there (then it answers cancelled, and nothing else closes
// its done).
func (s *liveSession) dropWaiting(w *waitingPrompt) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.queue.waiting {
		if x == w {
			s.queue.waiting = append(s.queue.waiting[:i:i], s.queue.waiting[i+1:]...)
			return true
		}
	}
	return false
}

// cancelWaiting drops every waiting prompt of s (s.mu held): each
// answers cancelled. The steering prompts the running turn took are
// answered as that turn is (cancelled too).
func (s *liveSession) cancelWaiting() {
	for _, w := range s.queue.waiting {
		w.cancelled = true
		close(w.done)
	}
	s.queue.waiting = nil
}
