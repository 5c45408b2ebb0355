package bridge

import (
	"context"
	"sync"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/permission"
)

// permAsks are the permission requests waiting for the editor's answer
// across the sessions that share it: a session and the child sessions
// its turns start (a child's permState points at its parent's). One
// session asks one question at a time (permState.ask); its children may
// ask at the same time, so one "always" answer can cover requests
// already on the editor's screen.
type permAsks struct {
	mu      sync.Mutex
	pending map[*pendingAsk]struct{}
}

// pendingAsk is one session/request_permission on its way: the call it
// asks about, and how to withdraw it.
type pendingAsk struct {
	perm *permState
	call permission.Call
	// withdraw cancels the request's context: the connection then sends
	// `$/cancel_request` for it and stops waiting for its answer.
	withdraw context.CancelFunc
	// covered holds the decision of another answer's rule once it covered
	// this call (set before withdraw is called).
	covered chan permission.Decision
}

// askOutcome is how a permission request ended: the editor's answer
// (res, or err), or, when covered, the decision of another request's
// "always" answer that covered the call while it waited.
type askOutcome struct {
	res      acp.RequestPermissionResponse
	err      error
	covered  bool
	decision permission.Decision
}

// request asks the editor about call c of p with req; when, meanwhile,
// another request's "always" answer (cover) decided c, the request is
// withdrawn and the outcome is that decision.
func (a *permAsks) request(ctx context.Context, p *permState, c permission.Call, req acp.RequestPermissionRequest) askOutcome {
	askCtx, withdraw := context.WithCancel(ctx)
	defer withdraw()
	pa := &pendingAsk{perm: p, call: c, withdraw: withdraw, covered: make(chan permission.Decision, 1)}
	a.mu.Lock()
	if a.pending == nil {
		a.pending = map[*pendingAsk]struct{}{}
	}
	a.pending[pa] = struct{}{}
	a.mu.Unlock()
	res, err := p.b.client.RequestPermission(askCtx, req)
	a.mu.Lock()
	delete(a.pending, pa)
	a.mu.Unlock()
	select {
	case d := <-pa.covered:
		return askOutcome{covered: true, decision: d}
	default:
		return askOutcome{res: res, err: err}
	}
}

// cover answers every other waiting request whose call the rules of mem
// (which just stored an "always" answer) now decide, allowed or refused,
// and withdraws it from the editor; a call they would still ask about
// stays on screen.
func (a *permAsks) cover(mem *permission.Memory) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for pa := range a.pending {
		d, _ := mem.Decide(pa.perm.rulesMode(), pa.call)
		if d == permission.Ask {
			continue
		}
		delete(a.pending, pa)
		pa.covered <- d
		pa.withdraw()
	}
}
