package server_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/bridge"
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/server"
)

// schemaAgentMethods are the methods of the pinned schemas (stable and
// unstable) that an editor or a conductor may send an agent: x-side
// "agent" or "proxy", requests and notifications alike.
func schemaAgentMethods(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range []string{"schema.json", "schema.unstable.json"} {
		b, err := os.ReadFile(filepath.Join(acptest.SchemaDir(t), f))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Defs map[string]struct {
				Side   string `json:"x-side"`
				Method string `json:"x-method"`
			} `json:"$defs"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for name, d := range doc.Defs {
			if (d.Side == "agent" || d.Side == "proxy") && d.Method != "" &&
				(strings.HasSuffix(name, "Request") || strings.HasSuffix(name, "Notification")) && !slices.Contains(out, d.Method) {
				out = append(out, d.Method)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestEveryAgentMethod: every method the pinned schemas let an editor
// send the agent is served, exercised here end to end (the transcript
// is validated against the schema when the test ends), or is in
// acp.RefusedMethods and answered -32601; initialize advertises the
// optional ones. Along the way: auth/status and its update after a
// logout; session/archive of an open session closes it and hides it from
// the default list (the archived filter shows it, a bad filter is
// -32602), it stays loadable and unarchive lists it again;
// session/status answers open, saved or -32002 with the id; the
// providers/* methods are offered when the server has providers.
func TestEveryAgentMethod(t *testing.T) {
	var hasKey atomic.Bool
	hasKey.Store(true)
	auth := bridge.Auth{Command: testExecutable,
		Check: func() error {
			if !hasKey.Load() {
				return errors.New("no API key: run `dsh-acp login`")
			}
			return nil
		},
		Logout: func() error { hasKey.Store(false); return nil },
		Accounts: func() []acp.AuthAccount {
			if !hasKey.Load() {
				return nil
			}
			yes := true
			return []acp.AuthAccount{{Label: "API key for https://api.deepseek.com (dsh-acp login)", Active: &yes}}
		}}
	rec := e2etest.Replay(t, e2etest.Text(nil, []string{"Hello."}, "stop"))
	var routed []string
	h := newHarness(t, harnessOpts{replay: rec, auth: &auth, options: func(o *server.Options) {
		o.Providers = &server.Providers{MainURL: "https://api.deepseek.com", Route: func(u, _ string) { routed = append(routed, u) }}
	}})
	done := map[string]bool{}
	call := func(method string, params, result any) {
		t.Helper()
		done[method] = true
		h.mustCall(method, params, result)
	}
	fails := func(method string, params any, code int) string {
		t.Helper()
		done[method] = true
		got, msg := rpcError(t, h, method, params)
		if got != code {
			t.Errorf("%s %v: code %d (%s), want %d", method, params, got, msg, code)
		}
		return msg
	}

	sid := h.start(harnessOpts{})
	done[acp.MethodSessionNew] = true
	var ir acp.InitializeResponse
	call(acp.MethodInitialize, map[string]any{"protocolVersion": 1}, &ir)
	sc, ac := ir.AgentCapabilities.SessionCapabilities, ir.AgentCapabilities.Auth
	if sc == nil || sc.Archive == nil || sc.Status == nil || ac == nil || ac.Status == nil || ac.Logout == nil || ir.AgentCapabilities.Providers == nil {
		t.Errorf("initialize does not advertise archive, status, auth.status, logout and providers: %+v %+v", sc, ac)
	}
	call(acp.MethodAuthenticate, map[string]any{"methodId": "login"}, nil)
	var pr acp.PromptResponse
	call(acp.MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock("hi")}}, &pr)
	if pr.StopReason != acp.StopEndTurn {
		t.Errorf("prompt: %v", pr.StopReason)
	}
	done[acp.MethodSessionCancel] = true
	if err := h.client.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": sid}); err != nil {
		t.Fatal(err)
	}
	call(acp.MethodSessionSetMode, map[string]any{"sessionId": sid, "modeId": "default"}, nil)
	call(acp.MethodSessionSetConfigOption, map[string]any{"sessionId": sid, "configId": "mode", "value": "plan"}, nil)
	call(acp.MethodSessionSetTitle, map[string]any{"sessionId": sid, "title": "Methods"}, nil)
	var fork acp.ForkSessionResponse
	call(acp.MethodSessionFork, map[string]any{"sessionId": sid, "cwd": h.cwd, "mcpServers": []any{}}, &fork)

	status := func(id string) string {
		t.Helper()
		var r acp.SessionStatusResponse
		call(acp.MethodSessionStatus, map[string]any{"sessionId": id}, &r)
		return r.Status
	}
	listed := func(filter string) map[string]bool {
		t.Helper()
		params := map[string]any{"cwd": h.cwd}
		if filter != "" {
			params["archived"] = filter
		}
		var r acp.ListSessionsResponse
		call(acp.MethodSessionList, params, &r)
		out := map[string]bool{}
		for _, s := range r.Sessions {
			out[s.SessionID] = s.Archived
		}
		return out
	}
	if st := status(sid); st != acp.SessionOpen {
		t.Errorf("status of an open session: %q", st)
	}
	call(acp.MethodSessionClose, map[string]any{"sessionId": fork.SessionID}, nil)
	if st := status(fork.SessionID); st != acp.SessionSaved {
		t.Errorf("status of a closed session: %q", st)
	}
	call(acp.MethodSessionResume, map[string]any{"sessionId": fork.SessionID, "cwd": h.cwd, "mcpServers": []any{}}, nil)

	// Archiving the open session closes it; it is hidden by default.
	call(acp.MethodSessionArchive, map[string]any{"sessionId": sid}, nil)
	call(acp.MethodSessionArchive, map[string]any{"sessionId": sid}, nil) // again: fine
	if st := status(sid); st != acp.SessionSaved {
		t.Errorf("status of an archived session: %q, want saved (closed, on disk)", st)
	}
	if l := listed(""); len(l) != 1 || l[sid] {
		t.Errorf("default list %v: want the fork only", l)
	}
	if l := listed(acp.ArchivedOnly); len(l) != 1 || !l[sid] {
		t.Errorf("archived only %v: want the archived session, marked archived", l)
	}
	if l := listed(acp.ArchivedInclude); len(l) != 2 || !l[sid] || l[fork.SessionID] {
		t.Errorf("archived include %v: want both, the first one marked", l)
	}
	if msg := fails(acp.MethodSessionList, map[string]any{"archived": "hidden"}, acp.CodeInvalidParams); !strings.Contains(msg, `"hidden"`) {
		t.Errorf("a bad filter: %s", msg)
	}
	if msg := fails(acp.MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock("x")}}, acp.CodeResourceNotFound); msg == "" {
		t.Error("a prompt to an archived (closed) session was served")
	}
	// Still loadable; unarchive lists it again.
	call(acp.MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": h.cwd, "mcpServers": []any{}}, nil)
	call(acp.MethodSessionUnarchive, map[string]any{"sessionId": sid}, nil)
	if l := listed(""); len(l) != 2 {
		t.Errorf("after unarchive, the default list is %v", l)
	}
	const ghost = "sess_00000000000000000000000000000000"
	for _, m := range []string{acp.MethodSessionArchive, acp.MethodSessionUnarchive} {
		fails(m, map[string]any{"sessionId": ghost}, acp.CodeResourceNotFound)
	}
	done[acp.MethodSessionStatus] = true
	var se *acp.Error
	if err := h.call(acp.MethodSessionStatus, map[string]any{"sessionId": ghost}, nil); !errors.As(err, &se) ||
		se.Code != acp.CodeResourceNotFound || !strings.Contains(string(mustJSON(se.Data)), ghost) {
		t.Errorf("status of an unknown session: %v", err)
	}
	call(acp.MethodSessionDelete, map[string]any{"sessionId": fork.SessionID}, nil)

	// auth/status, then logout: the update, and the new status.
	var as acp.AuthStatusResponse
	call(acp.MethodAuthStatus, map[string]any{}, &as)
	if as.State != acp.AuthAuthenticated || len(as.Accounts) != 1 || as.Accounts[0].Active == nil || !*as.Accounts[0].Active {
		t.Errorf("auth/status with a key: %+v", as)
	}
	from := len(h.tr.AgentLines())
	call(acp.MethodLogout, map[string]any{}, nil)
	h.waitAgentLine(from, `"method":"auth/status_update","params":{"state":"unauthenticated"}`)
	as = acp.AuthStatusResponse{}
	call(acp.MethodAuthStatus, nil, &as)
	if as.State != acp.AuthUnauthenticated || len(as.Accounts) != 0 {
		t.Errorf("auth/status after logout: %+v", as)
	}

	// Providers (routing through a real endpoint: TestProviders).
	var lp acp.ListProvidersResponse
	call(acp.MethodProvidersList, nil, &lp)
	call(acp.MethodProvidersSet, map[string]any{"providerId": "alt", "apiType": "openai", "baseUrl": "http://127.0.0.1:1",
		"headers": map[string]string{"Authorization": "Bearer sk-alt-0003"}}, nil)
	call(acp.MethodProvidersDisable, map[string]any{"providerId": "alt"}, nil)
	if len(lp.Providers) != 1 || lp.Providers[0].ProviderID != "main" || strings.Join(routed, " ") != "http://127.0.0.1:1 https://api.deepseek.com" {
		t.Errorf("providers %s, routed %q", mustJSON(lp), routed)
	}

	// What is refused on purpose is -32601 (a notification is ignored);
	// everything else of the schema was served above.
	for m := range acp.RefusedMethods {
		fails(m, map[string]any{}, acp.CodeMethodNotFound)
	}
	if err := h.client.Notify(acp.MethodMCPMessage, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	schema := schemaAgentMethods(t)
	for _, m := range schema {
		_, refused := acp.RefusedMethods[m]
		if !refused && !done[m] {
			t.Errorf("method %s of the pinned schema is neither served (exercised here) nor refused on purpose (acp.RefusedMethods)", m)
		}
	}
	for m := range acp.RefusedMethods {
		if !slices.Contains(schema, m) {
			t.Errorf("acp.RefusedMethods lists %s, which the pinned schema does not have", m)
		}
	}
}
