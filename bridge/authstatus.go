package bridge

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dsh-acp/dsh-acp/acp"
)

var _ acp.AuthStatuser = (*Bridge)(nil)

// authState is the auth status last told to the editor (answered by
// auth/status, sent by auth/status_update, or seen at initialize), so
// that an update is sent only when the status differs from it.
type authState struct {
	mu    sync.Mutex
	last  string // the status's JSON
	known bool
}

// swap records r's JSON and reports whether it differs from what was
// recorded before (false when nothing was).
func (a *authState) swap(r acp.AuthStatusResponse) bool {
	b, _ := json.Marshal(r)
	a.mu.Lock()
	defer a.mu.Unlock()
	changed := a.known && a.last != string(b)
	a.last, a.known = string(b), true
	return changed
}

// authStatus is the agent's auth status now: not_required when no key
// is needed (a replay), authenticated when a model request would have a
// key (the key sources are read again), else unauthenticated; with the
// keys the agent can see as accounts (labels only, Auth.Accounts).
func (b *Bridge) authStatus() acp.AuthStatusResponse {
	r := acp.AuthStatusResponse{State: acp.AuthNotRequired}
	if b.cfg.Auth.Check != nil {
		r.State = acp.AuthAuthenticated
		if b.cfg.Auth.Check() != nil {
			r.State = acp.AuthUnauthenticated
		}
	}
	if b.cfg.Auth.Accounts != nil {
		r.Accounts = b.cfg.Auth.Accounts()
	}
	return r
}

// AuthStatus implements acp.AuthStatuser (unstable schema): the status
// authStatus gives, never -32000 (a client asks it to learn whether a
// login is needed), and nothing changed.
func (b *Bridge) AuthStatus(_ context.Context, _ acp.AuthStatusRequest) (acp.AuthStatusResponse, error) {
	r := b.authStatus()
	b.auth.swap(r)
	return r, nil
}

// noteAuth sends `auth/status_update` when the status differs from the
// one last told (after a logout, or an authenticate that follows a
// terminal login). The editor must implement acp.AuthStatusUpdater (the
// connection does); an error sending is logged.
func (b *Bridge) noteAuth(ctx context.Context) {
	r := b.authStatus()
	if !b.auth.swap(r) {
		return
	}
	u, ok := b.client.(acp.AuthStatusUpdater)
	if !ok {
		return
	}
	if err := u.AuthStatusUpdate(ctx, acp.AuthStatusUpdateNotification(r)); err != nil {
		b.log.Warn("could not send auth/status_update", "err", err)
	}
}
