package bridge

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/dsh-acp/dsh-acp/acp"
)

// MainProvider is the id of the configured endpoint among the providers
// (providers/list): required, never disabled.
const MainProvider = "main"

// Providers is the model endpoint's routing for the unstable providers/*
// methods (Config.Providers; nil: not offered).
type Providers struct {
	// MainURL is the configured endpoint (--base-url).
	MainURL string
	// Route points the next model requests (and the model list) at
	// baseURL, sending key when it is not "" and the configured key
	// sources otherwise.
	Route func(baseURL, key string)
}

// providerState is what providers/set told the agent: each provider's
// base URL and key (never answered back), and the one in use.
type providerState struct {
	mu     sync.Mutex
	conf   map[string]providerConf // by id; main is implied until set
	active string                  // "" means main
}

type providerConf struct {
	baseURL, key string
	disabled     bool
}

// providerAgent is the Bridge with the providers/* methods: what Serve
// hands the connection when Config.Providers is set, so that initialize
// advertises them only then.
type providerAgent struct{ *Bridge }

var _ acp.ProviderConfigurer = providerAgent{}

// ListProviders implements acp.ProviderConfigurer (unstable schema):
// main first (required), then the providers set, by id; each with its
// base URL, the one in use marked `_meta.active`; a disabled one without
// current. Keys are never shown.
func (b providerAgent) ListProviders(context.Context, acp.ListProvidersRequest) (acp.ListProvidersResponse, error) {
	b.prov.mu.Lock()
	defer b.prov.mu.Unlock()
	ids := []string{MainProvider}
	for id := range b.prov.conf {
		if id != MainProvider {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids[1:])
	out := acp.ListProvidersResponse{Providers: []acp.ProviderInfo{}}
	for _, id := range ids {
		c, ok := b.prov.conf[id]
		if !ok {
			c = providerConf{baseURL: b.cfg.Providers.MainURL}
		}
		info := acp.ProviderInfo{ProviderID: id, Supported: []string{acp.ProtocolOpenAI}, Required: id == MainProvider}
		if !c.disabled {
			info.Current = &acp.ProviderCurrentConfig{APIType: acp.ProtocolOpenAI, BaseURL: c.baseURL}
		}
		if id == b.prov.current() {
			info.Meta = acp.Meta(`{"active":true}`)
		}
		out.Providers = append(out.Providers, info)
	}
	return out, nil
}

// current is the provider in use (mu held).
func (p *providerState) current() string {
	if p.active == "" {
		return MainProvider
	}
	return p.active
}

// SetProvider implements acp.ProviderConfigurer (unstable schema): the
// provider's whole configuration (an OpenAI-compatible base URL, and the
// key as an `Authorization: Bearer KEY` header; no other header can be
// sent) replaces what it had, and model requests go to it from the next
// one on, without a restart; the model selector follows the new
// endpoint's list (announceModels). Setting main without a key keeps the
// configured key sources. A protocol other than openai, a base URL that
// is not http(s), another header, a malformed Authorization or no key
// for a base URL on another host than the configured endpoint's (it
// would get the configured key) is -32602.
func (b providerAgent) SetProvider(_ context.Context, p acp.SetProviderRequest) (acp.SetProviderResponse, error) {
	if p.ProviderID == "" {
		return acp.SetProviderResponse{}, acp.InvalidParams("Invalid params: providerId is required")
	}
	if p.APIType != acp.ProtocolOpenAI {
		return acp.SetProviderResponse{}, acp.InvalidParams("Invalid params: apiType %q is not supported (this agent speaks %q)", p.APIType, acp.ProtocolOpenAI)
	}
	if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return acp.SetProviderResponse{}, acp.InvalidParams("Invalid params: baseUrl must be an http(s) URL, got %q", p.BaseURL)
	}
	key := ""
	for name, v := range p.Headers {
		if !strings.EqualFold(name, "Authorization") {
			return acp.SetProviderResponse{}, acp.InvalidParams("Invalid params: header %q cannot be sent (only Authorization: Bearer KEY)", name)
		}
		k, ok := strings.CutPrefix(v, "Bearer ")
		if !ok || strings.TrimSpace(k) == "" {
			return acp.SetProviderResponse{}, acp.InvalidParams("Invalid params: the Authorization header must be \"Bearer KEY\"")
		}
		key = strings.TrimSpace(k)
	}
	if key == "" && !sameHost(p.BaseURL, b.cfg.Providers.MainURL) {
		// Without a key of its own the provider would get the
		// configured endpoint's key.
		return acp.SetProviderResponse{}, acp.InvalidParams("Invalid params: a provider on another host than the configured endpoint needs its own key (headers: Authorization: Bearer KEY); the configured key is not sent there")
	}
	b.prov.mu.Lock()
	defer b.prov.mu.Unlock()
	if b.prov.conf == nil {
		b.prov.conf = map[string]providerConf{}
	}
	b.prov.conf[p.ProviderID] = providerConf{baseURL: strings.TrimRight(p.BaseURL, "/"), key: key}
	b.prov.active = p.ProviderID
	b.cfg.Providers.Route(strings.TrimRight(p.BaseURL, "/"), key)
	b.cfg.Models.Refetch(b.announceModels)
	b.log.Info("model requests go to a provider the editor set", "provider", p.ProviderID, "baseUrl", p.BaseURL)
	return acp.SetProviderResponse{}, nil
}

// DisableProvider implements acp.ProviderConfigurer (unstable schema):
// the provider stays listed without a current configuration; when it
// was in use, model requests go back to main. main is required (-32602);
// an id never set is -32602 too.
func (b providerAgent) DisableProvider(_ context.Context, p acp.DisableProviderRequest) (acp.DisableProviderResponse, error) {
	if p.ProviderID == MainProvider {
		return acp.DisableProviderResponse{}, acp.InvalidParams("Invalid params: provider %q is required and cannot be disabled", MainProvider)
	}
	b.prov.mu.Lock()
	defer b.prov.mu.Unlock()
	c, ok := b.prov.conf[p.ProviderID]
	if !ok {
		return acp.DisableProviderResponse{}, acp.InvalidParams("Invalid params: unknown provider %q", p.ProviderID)
	}
	c.disabled, c.key = true, ""
	b.prov.conf[p.ProviderID] = c
	if b.prov.active == p.ProviderID {
		b.prov.active = ""
		m, set := b.prov.conf[MainProvider]
		if !set {
			m = providerConf{baseURL: b.cfg.Providers.MainURL}
		}
		b.cfg.Providers.Route(m.baseURL, m.key)
		b.cfg.Models.Refetch(b.announceModels)
	}
	return acp.DisableProviderResponse{}, nil
}

// announceModels sends every open session whose answer the editor has
// its option list again (config_option_update): the model selector
// follows the endpoint's new list.
func (b *Bridge) announceModels() {
	for _, s := range b.liveSessions() {
		s.cfg.mu.Lock()
		answered := s.cfg.answered
		s.cfg.mu.Unlock()
		if answered && b.session(s.id) == s {
			b.announceOptions(s)
		}
	}
}

// sameHost reports whether URLs a and b name the same host and port
// (case-insensitive; an unparsable URL matches nothing).
func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host != "" && strings.EqualFold(ua.Host, ub.Host)
}
