package main

import (
	"fmt"
	"log/slog"
	"net/url"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// deepSeekWeb reports whether the endpoint has DeepSeek's Search and
// Fetch APIs at its origin: whether it is DeepSeek's own API (the base
// URL's host api.deepseek.com). The one place that decides it.
func deepSeekWeb(c config) bool { return llm.IsDeepSeek(c.BaseURL) }

// parseWeb checks the web flags: the override URLs must be http(s) URLs
// and --web-allow-private 0 or 1.
func parseWeb(c *config, allowPrivate string) error {
	for _, f := range []struct{ name, env, v string }{
		{"--web-search-url", "DSH_WEB_SEARCH_URL", c.WebSearchURL},
		{"--web-fetch-url", "DSH_WEB_FETCH_URL", c.WebFetchURL},
	} {
		if f.v == "" {
			continue
		}
		if u, err := url.Parse(f.v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s (or %s) must be an http(s) URL, got %q", f.name, f.env, f.v)
		}
	}
	switch allowPrivate {
	case "0", "":
	case "1":
		c.WebAllowPrivate = true
	default:
		return fmt.Errorf("--web-allow-private (or DSH_WEB_ALLOW_PRIVATE) must be 0 or 1, got %q", allowPrivate)
	}
	return nil
}

// webConfig is what the web tools are built from: web_search where a
// Search API is, and web_fetch, with the model's key, which goes only to
// the base URL's host.
func webConfig(cfg config, log *slog.Logger) *server.Web {
	return &server.Web{
		BaseURL:      cfg.BaseURL,
		DeepSeek:     deepSeekWeb(cfg),
		SearchURL:    cfg.WebSearchURL,
		FetchURL:     cfg.WebFetchURL,
		Key:          keySource(cfg).APIKey,
		AllowPrivate: cfg.WebAllowPrivate,
		Record:       cfg.Record,
		Replay:       cfg.Replay,
		UserAgent:    "dsh-acp/" + version,
		Log:          log,
	}
}
