package bridge

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/dsh-acp/dsh-acp/acp"
)

// LoginMethodID is the id of the one auth method initialize offers
// (ACP §5): log in by running `dsh-acp login` in a terminal.
const LoginMethodID = "login"

// Auth is what the bridge knows about the API key (Config.Auth). The zero
// value still offers the login method (initialize's authMethods is never
// empty: the ACP registry and Zed rely on it) but gates nothing.
type Auth struct {
	// Command is the absolute path of the agent's executable, which the
	// legacy `_meta["terminal-auth"]` method names; "" means
	// os.Executable().
	Command string
	// LoginArgs are the arguments after Command that log in with the
	// agent's own endpoint (["login"], with --base-url before it when the
	// agent runs against another endpoint); nil means ["login"]. The typed
	// terminal method always has ["login"]: the editor appends it to the
	// command line it started the agent with.
	LoginArgs []string
	// Check returns nil when the next model request has a key, else an
	// error whose text tells the user how to log in: session/prompt and
	// authenticate answer it as -32000. nil: no key is needed (replay).
	Check func() error
	// Logout removes the key `login` stored (ACP `logout`); nil: there is
	// nothing to remove.
	Logout func() error
	// Accounts lists the keys the agent can see, for auth/status: a label
	// each (where the key is, never the key) and whether model requests
	// use it; nil: none reported.
	Accounts func() []acp.AuthAccount
}

// The login method's texts.
const (
	loginName        = "Log in with an API key"
	loginDescription = "Runs `dsh-acp login` in a terminal: it asks for the API key without echo, checks it with the endpoint and stores it for this user (or set DSH_API_KEY / DEEPSEEK_API_KEY in the agent's environment)."
	loginLabel       = "dsh-acp login"
)

var _ acp.Logouter = (*Bridge)(nil)

// authMethods is initialize's authMethods for an editor with caps: a
// `type: "terminal"` method when the editor runs terminal logins
// (auth.terminal), carrying the legacy `_meta["terminal-auth"]` too when
// the editor also advertises that; otherwise an agent method carrying the
// legacy `_meta["terminal-auth"]`, which Zed and the ACP registry's
// validator read today.
func (b *Bridge) authMethods(caps acp.ClientCapabilities) []acp.AuthMethod {
	legacy := b.legacyTerminalAuth()
	if caps.Auth != nil && caps.Auth.Terminal {
		m := acp.AuthMethod{Type: acp.AuthTerminal, ID: LoginMethodID, Name: loginName,
			Description: loginDescription, Args: []string{"login"}}
		if metaFlag(caps.Meta, "terminal-auth") {
			m.Meta = legacy
		}
		return []acp.AuthMethod{m}
	}
	return []acp.AuthMethod{{ID: LoginMethodID, Name: loginName, Description: loginDescription, Meta: legacy}}
}

// legacyTerminalAuth is the `_meta` object {"terminal-auth": {label,
// command, args}}: the command Zed runs in a terminal for the method.
func (b *Bridge) legacyTerminalAuth() acp.Meta {
	cmd := b.cfg.Auth.Command
	if cmd == "" {
		cmd = executable()
	}
	args := b.cfg.Auth.LoginArgs
	if args == nil {
		args = []string{"login"}
	}
	meta, _ := json.Marshal(map[string]any{"terminal-auth": map[string]any{
		"label": loginLabel, "command": cmd, "args": args,
	}})
	return meta
}

// executable is the absolute path of the running binary, or "dsh-acp"
// (found through PATH) when the system cannot tell.
func executable() string {
	p, err := os.Executable()
	if err != nil {
		return "dsh-acp"
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// metaFlag reports whether the `_meta` object m has key set to true.
func metaFlag(m acp.Meta, key string) bool {
	if len(m) == 0 {
		return false
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(m, &v) != nil {
		return false
	}
	return string(v[key]) == "true"
}

// Authenticate implements acp.Agent for the method initialize offers: the
// login happens in the editor's terminal (`dsh-acp login`), so this
// checks that a key is now available (re-reading the credentials file)
// and answers {} or -32000 with the reason; a status that changed since
// the editor last heard it is sent first (auth/status_update). Another
// method id is -32602.
func (b *Bridge) Authenticate(ctx context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	if p.MethodID != LoginMethodID {
		return acp.AuthenticateResponse{}, acp.InvalidParams("Invalid params: unknown authentication method %q (this agent offers %q)", p.MethodID, LoginMethodID)
	}
	b.noteAuth(ctx)
	if err := b.checkAuth(); err != nil {
		return acp.AuthenticateResponse{}, err
	}
	return acp.AuthenticateResponse{}, nil
}

// Logout implements acp.Logouter: the key `dsh-acp login` stored for the
// endpoint is removed (a key in DSH_API_KEY / DEEPSEEK_API_KEY stays: the
// agent cannot unset its own environment). Running sessions stay open;
// their next prompt answers -32000 when no key is left. A status that
// changed is sent as auth/status_update.
func (b *Bridge) Logout(ctx context.Context, _ acp.LogoutRequest) (acp.LogoutResponse, error) {
	if b.cfg.Auth.Logout != nil {
		if err := b.cfg.Auth.Logout(); err != nil {
			return acp.LogoutResponse{}, &acp.Error{Code: acp.CodeInternalError, Message: "Internal error: " + err.Error()}
		}
	}
	b.log.Info("logged out: the stored API key was removed")
	b.noteAuth(ctx)
	return acp.LogoutResponse{}, nil
}

// checkAuth is nil when a model request would have a key, else the
// -32000 error to answer.
func (b *Bridge) checkAuth() error {
	if b.cfg.Auth.Check == nil {
		return nil
	}
	if err := b.cfg.Auth.Check(); err != nil {
		return &acp.Error{Code: acp.CodeAuthRequired, Message: err.Error(), Data: map[string]any{"reason": "NO_API_KEY"}}
	}
	return nil
}
