package server_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// TestProviders: providers/list shows the configured endpoint as the
// required main provider; providers/set routes the next prompt's model
// request to the provider's base URL with its key (never listed back),
// without a restart, and the model selector gets the new endpoint's
// models; disabling it routes back to main; main cannot be
// disabled; an unsupported protocol, header or URL is -32602.
func TestProviders(t *testing.T) {
	var mu sync.Mutex
	var seen []string // "main Bearer k" per chat request
	endpoint := func(name string) *fakeModel {
		return newFakeModel(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			mu.Lock()
			seen = append(seen, name+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
			mu.Unlock()
			if r.URL.Path == "/models" {
				_, _ = io.WriteString(w, `{"data":[{"id":"`+name+`-model"}]}`)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, e2etest.Text(nil, []string{"From " + name + "."}, "stop"))
		})
	}
	mainEP, altEP := endpoint("main"), endpoint("alt")
	sw := llm.NewSwitch(llm.HTTP{BaseURL: mainEP.srv.URL, APIKey: "sk-main-0001"})
	h := newHarness(t, harnessOpts{model: sw, options: func(o *server.Options) {
		o.Providers = &server.Providers{MainURL: mainEP.srv.URL, Route: sw.Route}
		o.Models = sw
	}})
	sid := h.start(harnessOpts{})
	chats := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, s := range seen {
			if strings.Contains(s, "/chat/completions") {
				out = append(out, s)
			}
		}
		return out
	}
	turn := func(want string) {
		t.Helper()
		n := len(chats())
		if stop, err := h.prompt(sid, "hi"); err != nil || stop != acp.StopEndTurn {
			t.Fatalf("prompt: %v %v", stop, err)
		}
		if got := chats(); len(got) != n+1 || got[n] != want {
			t.Errorf("the model request went to %q, want %q", got[n:], want)
		}
	}
	list := func() acp.ListProvidersResponse {
		t.Helper()
		var r acp.ListProvidersResponse
		h.mustCall(acp.MethodProvidersList, map[string]any{}, &r)
		return r
	}
	if r := list(); len(r.Providers) != 1 || r.Providers[0].ProviderID != "main" || !r.Providers[0].Required ||
		r.Providers[0].Current == nil || r.Providers[0].Current.BaseURL != mainEP.srv.URL || r.Providers[0].Current.APIType != "openai" {
		t.Errorf("providers at start: %s", mustJSON(r))
	}
	turn("main /chat/completions Bearer sk-main-0001")

	h.mustCall(acp.MethodProvidersSet, map[string]any{"providerId": "alt", "apiType": "openai", "baseUrl": altEP.srv.URL + "/",
		"headers": map[string]string{"Authorization": "Bearer sk-alt-0002"}}, nil)
	turn("alt /chat/completions Bearer sk-alt-0002")
	// The model selector follows: the new endpoint's models.
	h.waitAgentLine(0, `"value":"alt-model"`)
	r := list()
	if len(r.Providers) != 2 || r.Providers[1].ProviderID != "alt" || r.Providers[1].Current == nil ||
		r.Providers[1].Current.BaseURL != altEP.srv.URL || !strings.Contains(string(r.Providers[1].Meta), `"active":true`) {
		t.Errorf("providers after set: %s", mustJSON(r))
	}
	if b := string(mustJSON(r)); strings.Contains(b, "sk-alt") {
		t.Errorf("providers/list shows a key: %s", b)
	}

	h.mustCall(acp.MethodProvidersDisable, map[string]any{"providerId": "alt"}, nil)
	turn("main /chat/completions Bearer sk-main-0001")
	if r := list(); len(r.Providers) != 2 || r.Providers[1].Current != nil {
		t.Errorf("a disabled provider: %s", mustJSON(r))
	}
	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{acp.MethodProvidersDisable, map[string]any{"providerId": "main"}, "required"},
		{acp.MethodProvidersDisable, map[string]any{"providerId": "nope"}, `"nope"`},
		{acp.MethodProvidersSet, map[string]any{"providerId": "x", "apiType": "anthropic", "baseUrl": altEP.srv.URL}, `"anthropic"`},
		{acp.MethodProvidersSet, map[string]any{"providerId": "x", "apiType": "openai", "baseUrl": "ftp://h"}, "http(s)"},
		{acp.MethodProvidersSet, map[string]any{"providerId": "x", "apiType": "openai", "baseUrl": altEP.srv.URL, "headers": map[string]string{"X-Route": "a"}}, `"X-Route"`},
	} {
		if code, msg := rpcError(t, h, tc.method, tc.params); code != acp.CodeInvalidParams || !strings.Contains(msg, tc.want) {
			t.Errorf("%s %v: %d %q, want -32602 with %s", tc.method, tc.params, code, msg, tc.want)
		}
	}
	turn("main /chat/completions Bearer sk-main-0001") // the refused calls changed nothing
}

// TestProviderKeyStaysHome: providers/set without a key for a base URL
// on another host than the configured endpoint is refused (-32602):
// routed there, the model requests carried the configured key to that
// host.
func TestProviderKeyStaysHome(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	alt := newFakeModel(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		auth = append(auth, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, e2etest.Text(nil, []string{"From alt."}, "stop"))
	})
	mainURL := "https://api.deepseek.com"
	sw := llm.NewSwitch(llm.HTTP{BaseURL: mainURL, APIKey: "sk-main-0001"})
	h := newHarness(t, harnessOpts{model: sw, options: func(o *server.Options) {
		o.Providers = &server.Providers{MainURL: mainURL, Route: sw.Route}
	}})
	sid := h.start(harnessOpts{})
	code, msg := rpcError(t, h, acp.MethodProvidersSet, map[string]any{"providerId": "alt", "apiType": "openai", "baseUrl": alt.srv.URL})
	if code != acp.CodeInvalidParams || !strings.Contains(msg, "key") {
		_, _ = h.prompt(sid, "hi")
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("providers/set without a key: %d %q; the other host saw %q", code, msg, auth)
	}
}
