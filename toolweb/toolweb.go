// Package toolweb holds the web tools: `web_search` (a query to
// DeepSeek's Search API, POST {origin}/v1/tools/search) and `web_fetch`
// (one http or https URL read as Markdown: through DeepSeek's Fetch API,
// POST {origin}/v1/tools/fetch, when the endpoint is DeepSeek's or a
// fetch URL is given, else fetched directly).
//
// The API key goes only to the model's base URL host: an endpoint on
// another host gets no Authorization header, and a directly fetched host
// never does. A direct fetch reads http and https only, follows at most
// MaxRedirects redirects, reads at most MaxBodyBytes of the body within
// FetchTimeout, converts HTML to Markdown (JohannesKaufmann/html-to-
// markdown), keeps other text types as they are and refuses anything
// else naming its content type; it connects only to public addresses
// (checked on the address dialled, after DNS, for every redirect too)
// unless AllowPrivate is set.
//
// web_search is read-only (it sends a query to the model's own
// provider); web_fetch is ClassNetwork with the URL's host as its
// Access.Host, so the permission policy asks per host. A successful API
// call carries its price (tools.Charge) for the session's cost; empty
// results and failures are free, as DeepSeek bills them.
package toolweb

import (
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Names of the tools.
const (
	SearchName = "web_search"
	FetchName  = "web_fetch"
)

// Limits of what the model and the cards get.
const (
	// MaxOutputBytes bounds the text a call returns to the model, as the
	// read tool's output is bounded (50 KiB); a longer page is cut with a
	// note stating its full length.
	MaxOutputBytes = 50 << 10
	// MaxQueryRunes is the longest query the Search API takes.
	MaxQueryRunes = 128
	// DefaultCount and MaxCount are the number of results asked for
	// without count, and the most count may ask for (the API's bounds).
	DefaultCount = 10
	MaxCount     = 50
	// CardRunes is how much of a fetched page a card shows.
	CardRunes = 4000
)

// Price is what one successful Search or Fetch API call costs, per
// currency: DeepSeek's pricing, 5 CNY or 0.75 USD per 1,000 successful
// requests of either API (failures, empty results and timeouts are not
// billed).
var Price = map[string]float64{"USD": 0.00075, "CNY": 0.005}

// Config is what the web tools are built from.
type Config struct {
	// BaseURL is the model's base URL (--base-url): the default API
	// endpoints are at its origin, and only its host receives the key.
	BaseURL string
	// DeepSeek: the endpoint is DeepSeek's own API, which has the Search
	// and Fetch APIs at BaseURL's origin.
	DeepSeek bool
	// SearchURL and FetchURL override the API endpoints
	// (--web-search-url, --web-fetch-url); either one also turns its
	// tool's API use on for another endpoint.
	SearchURL, FetchURL string
	// Key returns the API key (sent as Authorization: Bearer KEY).
	Key func() (string, error)
	// AllowPrivate lets a direct fetch reach loopback, private and
	// link-local addresses (--web-allow-private).
	AllowPrivate bool
	// Record and Replay are the --record and --replay directories: web
	// calls are written to, or answered from, DIR/web-NNN.json.
	Record, Replay string
	// UserAgent is sent with every request.
	UserAgent string
	// HTTP is the client of API requests; nil means a default one.
	HTTP *http.Client
	// Log receives a failure to write a recording; nil discards it.
	Log *slog.Logger
}

// Endpoints returns the Search and Fetch API URLs cfg uses: the override
// when given, else, for DeepSeek's endpoint, {origin}/v1/tools/search and
// {origin}/v1/tools/fetch; "" where there is none (no web_search; a
// direct web_fetch).
func Endpoints(cfg Config) (search, fetch string) {
	search, fetch = cfg.SearchURL, cfg.FetchURL
	if !cfg.DeepSeek {
		return search, fetch
	}
	origin := ""
	if u, err := url.Parse(cfg.BaseURL); err == nil && u.Host != "" {
		origin = u.Scheme + "://" + u.Host
	}
	if origin == "" {
		return search, fetch
	}
	if search == "" {
		search = origin + "/v1/tools/search"
	}
	if fetch == "" {
		fetch = origin + "/v1/tools/fetch"
	}
	return search, fetch
}

// Tools returns the web tools cfg offers: web_search when a Search API is
// there (Endpoints), and web_fetch always.
func Tools(cfg Config) []tools.Tool {
	w := newWeb(cfg)
	var out []tools.Tool
	if w.searchURL != "" {
		out = append(out, w.searchTool())
	}
	return append(out, w.fetchTool())
}

// web is the shared state of the two tools.
type web struct {
	searchURL, fetchURL string
	api                 *api
	direct              *direct
	tape                *tape
	log                 *slog.Logger
}

func newWeb(cfg Config) *web {
	search, fetch := Endpoints(cfg)
	keyHost := ""
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		keyHost = strings.ToLower(u.Host)
	}
	client := cfg.HTTP
	if client == nil {
		client = &http.Client{}
	}
	key := cfg.Key
	if key == nil {
		key = func() (string, error) { return "", nil }
	}
	w := &web{
		searchURL: search, fetchURL: fetch,
		api:    &api{keyHost: keyHost, key: key, client: client, userAgent: cfg.UserAgent, now: time.Now, sleep: sleepCtx},
		direct: newDirect(reachableBy(cfg.AllowPrivate), cfg.UserAgent),
		log:    cfg.Log,
	}
	switch {
	case cfg.Replay != "":
		w.tape = &tape{dir: cfg.Replay, replay: true}
	case cfg.Record != "":
		w.tape = &tape{dir: cfg.Record}
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	return w
}

// call runs one web call of kind through the tape: under replay the
// recorded answer, else do's, recorded when recording.
func (w *web) call(kind string, request any, do func() (json.RawMessage, error)) (json.RawMessage, error) {
	if w.tape.active() && w.tape.replay {
		return w.tape.play(kind)
	}
	b, err := do()
	if w.tape.active() {
		if werr := w.tape.keep(kind, request, b, err); werr != nil {
			w.log.Warn("could not record a web call", "kind", kind, "err", werr)
		}
	}
	return b, err
}

// serial reports whether the tools must run one at a time: while a tape
// records or replays, so that the calls keep the model's order.
func (w *web) serial() bool { return w.tape.active() }

// charge is the price of one successful API call of kind.
func charge(kind string) *tools.Charge {
	return &tools.Charge{Kind: kind, Price: maps.Clone(Price)}
}

// webErr is a failed web call: name WebError, code WEB_SEARCH_FAILED or
// WEB_FETCH_FAILED.
func webErr(code string, err error) *tools.Error {
	return &tools.Error{Name: "WebError", Code: code, Message: err.Error(), Err: err}
}

// argErr is a violated argument rule.
func argErr(msg string) *tools.Error {
	return &tools.Error{Name: tools.NameToolArgs, Code: tools.CodeInvalidArgs, Message: msg}
}
