package llm

import (
	"fmt"
	"net/url"
	"strings"
)

// Provider is the API dialect an endpoint speaks: which of the request
// fields and side endpoints that only DeepSeek's API has the agent uses.
// Everything DeepSeek-only (its catalog and prices, the thinking and
// reasoning_effort fields, the account balance, the web tools) keys off
// it, never off the host name, so a local fake of DeepSeek's API or a
// proxy in front of it behaves as the real host does. What every
// OpenAI-compatible endpoint shares (reasoning_content read from the
// stream and passed back on tool-call turns, /models) does not depend on
// it.
type Provider string

// The providers ParseProvider accepts.
const (
	// ProviderDeepSeek is DeepSeek's API (api.deepseek.com or a stand-in).
	ProviderDeepSeek Provider = "deepseek"
	// ProviderOpenAI is a plain OpenAI-compatible chat-completions
	// endpoint.
	ProviderOpenAI Provider = "openai"
)

// Providers are the accepted Provider values, in the order the help
// lists them.
var Providers = []Provider{ProviderDeepSeek, ProviderOpenAI}

// DeepSeek reports whether p is DeepSeek's dialect.
func (p Provider) DeepSeek() bool { return p == ProviderDeepSeek }

// ParseProvider reads a --provider value: "deepseek" or "openai" (any
// case, blanks around it ignored), or "" for DefaultProvider(baseURL).
// Another value is an error naming the accepted ones.
func ParseProvider(s, baseURL string) (Provider, error) {
	switch p := Provider(strings.ToLower(strings.TrimSpace(s))); p {
	case "":
		return DefaultProvider(baseURL), nil
	case ProviderDeepSeek, ProviderOpenAI:
		return p, nil
	}
	return "", fmt.Errorf("provider must be deepseek or openai, got %q", s)
}

// DefaultProvider is the dialect of an endpoint nobody named one for:
// ProviderDeepSeek for DeepSeek's own host (IsDeepSeek), else
// ProviderOpenAI.
func DefaultProvider(baseURL string) Provider {
	if IsDeepSeek(baseURL) {
		return ProviderDeepSeek
	}
	return ProviderOpenAI
}

// IsDeepSeek reports whether baseURL's host is api.deepseek.com
// (DeepSeek's own API; any case, any port or path). It only chooses
// DefaultProvider: the DeepSeek-only behaviour follows the Provider.
func IsDeepSeek(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Hostname(), "api.deepseek.com")
}

// Origin is baseURL's scheme and host (with port), where DeepSeek's
// other endpoints live (GET {origin}/user/balance, the web tools): for
// "https://api.deepseek.com/v1" it is "https://api.deepseek.com". A URL
// that does not parse, or has no scheme or host, is an error.
func Origin(baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return "", fmt.Errorf("base URL %q: %w", baseURL, err)
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("base URL %q has no scheme or host", baseURL)
	}
	return u.Scheme + "://" + u.Host, nil
}
