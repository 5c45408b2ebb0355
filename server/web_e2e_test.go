package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// webAPI is a local fake of DeepSeek's Search and Fetch APIs that keeps
// what it was sent.
type webAPI struct {
	t    *testing.T
	mu   sync.Mutex
	seen []string // "PATH AUTH BODY"
}

func (f *webAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.seen = append(f.seen, r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(b))
	f.mu.Unlock()
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/v1/tools/search" && body["query"] == "nothing":
		fmt.Fprint(w, `{"results":[]}`)
	case r.URL.Path == "/v1/tools/search":
		fmt.Fprint(w, `{"results":[{"title":"Go 1.26 release notes","url":"https://go.dev/doc/go1.26","summary":"What changed.","rerank_score":2.2},`+
			`{"title":"Go blog","url":"https://go.dev/blog/","summary":"News."}]}`)
	case r.URL.Path == "/v1/tools/fetch":
		fmt.Fprint(w, `{"title":"Go 1.26 Release Notes","content":"# Go 1.26\n\nThe release notes."}`)
	default:
		http.NotFound(w, r)
	}
}

func (f *webAPI) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// freeModel prices deepseek-chat at nothing per token, so a session's
// cost is what its web calls cost.
func freeModel(o *server.Options) {
	o.Catalog = llm.Catalog{Models: map[string]llm.Known{"deepseek-chat": {ContextWindow: 1 << 20, Price: &llm.Price{Currency: "USD"}}}}
}

// TestWebSearchFetchE2E: a research turn on DeepSeek's endpoint (a local
// fake): web_search and web_fetch cards (kind search with the results as
// resource links, kind fetch with the page), the requests the fake saw
// (path, key, body), each successful call's price in the next
// usage_update with the turn's counts in _meta (an empty search is
// free), and the cards again after session/load.
func TestWebSearchFetchE2E(t *testing.T) {
	fake := &webAPI{t: t}
	api := httptest.NewServer(fake)
	defer api.Close()
	steps := []string{
		e2etest.ToolCallsAt(0, [2]string{"web_search", `{"query":"go 1.26 site:go.dev","count":2}`}),
		e2etest.ToolCallsAt(1, [2]string{"web_fetch", `{"url":"https://go.dev/doc/go1.26"}`}, [2]string{"web_search", `{"query":"nothing"}`}),
		e2etest.Text(nil, []string{"Go 1.26 changed things."}, "stop"),
	}
	web := &server.Web{BaseURL: api.URL, DeepSeek: true, Key: func() (string, error) { return "sk-web", nil }}
	opts := func(o *server.Options) { freeModel(o); o.Web = web }
	state, cwd := t.TempDir(), t.TempDir()
	h := newHarness(t, harnessOpts{replay: e2etest.Replay(t, steps...), options: opts, stateDir: state, cwd: cwd})
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "what is new in go 1.26?"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	us := h.sessionUpdates()
	checkToolCallsEnd(t, us)
	checkWebCards(t, us)

	want := []string{
		`/v1/tools/search Bearer sk-web {"query":"go 1.26 site:go.dev","count":2}`,
		`/v1/tools/fetch Bearer sk-web {"url":"https://go.dev/doc/go1.26"}`,
		`/v1/tools/search Bearer sk-web {"query":"nothing","count":10}`,
	}
	// The two calls of step 2 run at once (both are concurrency-safe):
	// their order is the API's to see.
	got := fake.requests()
	if len(got) == 3 {
		slices.Sort(got[1:])
		slices.Sort(want[1:])
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the API saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	var costs []float64
	var metas []string
	for _, u := range us {
		if uu, ok := u.(acp.UsageUpdate); ok && uu.Cost != nil {
			costs = append(costs, uu.Cost.Amount)
			metas = append(metas, string(uu.Meta))
		}
	}
	// Usage after step 1 (nothing billed yet), after step 2 (one
	// search), after step 3 (the fetch; the empty search is free).
	wantCosts := []float64{0, 0.00075, 0.0015}
	wantMetas := []string{"", `{"billedCalls":{"search":1}}`, `{"billedCalls":{"fetch":1,"search":1}}`}
	if len(costs) != 3 {
		t.Fatalf("usage costs %v", costs)
	}
	for i := range wantCosts {
		if math.Abs(costs[i]-wantCosts[i]) > 1e-12 || metas[i] != wantMetas[i] {
			t.Errorf("usage %d: cost %v meta %s; want %v %s", i, costs[i], metas[i], wantCosts[i], wantMetas[i])
		}
	}

	// session/load shows the same cards again.
	h.stop()
	h2 := newHarness(t, harnessOpts{replay: e2etest.Replay(t), options: opts, stateDir: state, cwd: cwd})
	if _, err := h2.load(sid, cwd, nil); err != nil {
		t.Fatal(err)
	}
	checkWebCards(t, h2.sessionUpdates())
}

// checkWebCards checks the cards of TestWebSearchFetchE2E's turn.
func checkWebCards(t *testing.T, us []acp.Update) {
	t.Helper()
	var search, fetch *acp.ToolCallUpdate
	for _, u := range us {
		c, ok := toolCard(u)
		if !ok {
			continue
		}
		if c.Title != nil && *c.Title == "go 1.26 site:go.dev" && c.Kind == "search" && search == nil {
			cc := c
			search = &cc
		}
		if c.Title != nil && *c.Title == "https://go.dev/doc/go1.26" && c.Kind == "fetch" && fetch == nil {
			cc := c
			fetch = &cc
		}
	}
	if search == nil || fetch == nil {
		t.Fatalf("no search or fetch card among %d updates", len(us))
	}
	var links []string
	var page string
	for _, u := range us {
		c, ok := toolCard(u)
		if !ok || c.Status != acp.StatusCompleted {
			continue
		}
		for _, item := range c.Content {
			ct, ok := item.(acp.Content)
			if !ok {
				continue
			}
			switch {
			case c.ToolCallID == search.ToolCallID && ct.Content.Type == acp.BlockResourceLink:
				links = append(links, ct.Content.URI+" "+ct.Content.Title+" / "+ct.Content.Description)
			case c.ToolCallID == fetch.ToolCallID && ct.Content.Type == acp.BlockText:
				page += ct.Content.Text
			}
		}
	}
	if strings.Join(links, "\n") != "https://go.dev/doc/go1.26 Go 1.26 release notes / What changed.\nhttps://go.dev/blog/ Go blog / News." {
		t.Errorf("search card links:\n%s", strings.Join(links, "\n"))
	}
	if page != "**Go 1.26 Release Notes**\n<https://go.dev/doc/go1.26>\n\n# Go 1.26\n\nThe release notes." {
		t.Errorf("fetch card text %q", page)
	}
}

// pageServer serves one HTML page at /doc and a redirect to it at /go.
func pageServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/doc":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><title>Local doc</title></head><body><h2>Usage</h2><p>Run <code>make</code>.</p></body></html>`)
		case "/go":
			http.Redirect(w, r, "/doc", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// webFetchTurn runs one turn whose model fetches each url in turn (one
// call per step), with web_fetch fetching directly (no DeepSeek), and
// returns the harness and session.
func webFetchTurn(t *testing.T, mode string, allowPrivate bool, pc *permissionClient, urls ...string) (*harness, []acp.Update) {
	t.Helper()
	var steps []string
	for i, u := range urls {
		steps = append(steps, e2etest.ToolCallsAt(i, [2]string{"web_fetch", `{"url":"` + u + `"}`}))
	}
	steps = append(steps, e2etest.Text(nil, []string{"Read."}, "stop"))
	web := &server.Web{BaseURL: "https://api.example.com/v1", AllowPrivate: allowPrivate}
	h := newHarness(t, harnessOpts{replay: e2etest.Replay(t, steps...), mode: mode, options: func(o *server.Options) { o.Web = web }})
	if pc != nil {
		h.client.OnRequest = pc.handle
	}
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "read the docs"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	us := h.sessionUpdates()
	checkToolCallsEnd(t, us)
	return h, us
}

// finalTexts are the text items of the final update of each card, in
// order.
func finalTexts(us []acp.Update) []string {
	var out []string
	for _, u := range us {
		c, ok := u.(acp.ToolCallUpdate)
		if !ok || !isFinal(c) {
			continue
		}
		var b strings.Builder
		for _, item := range c.Content {
			if ct, ok := item.(acp.Content); ok && ct.Content.Type == acp.BlockText {
				b.WriteString(ct.Content.Text)
			}
		}
		out = append(out, string(c.Status)+": "+b.String())
	}
	return out
}

// TestWebFetchDirectE2E: without DeepSeek's Fetch API, web_fetch reads
// the page itself (following a redirect, HTML as Markdown) when
// --web-allow-private lets it reach the local server, and refuses the
// loopback address without it.
func TestWebFetchDirectE2E(t *testing.T) {
	srv := pageServer(t)
	_, us := webFetchTurn(t, "", true, nil, srv.URL+"/go")
	got := finalTexts(us)
	want := "completed: **Local doc**\n<" + srv.URL + "/doc>\n\n## Usage\n\nRun `make`."
	if len(got) != 1 || got[0] != want {
		t.Errorf("card %q, want %q", got, want)
	}
	_, us = webFetchTurn(t, "", false, nil, srv.URL+"/doc")
	got = finalTexts(us)
	if len(got) != 1 || !strings.HasPrefix(got[0], "failed: ") || !strings.Contains(got[0], "loopback, private or link-local") {
		t.Errorf("without --web-allow-private: %q", got)
	}
}

// TestWebFetchPermissionE2E: web_fetch asks per host in default mode
// (the request shows the full URL; "Always allow" covers that host, not
// another), asks in acceptEdits, and is refused in plan mode.
func TestWebFetchPermissionE2E(t *testing.T) {
	a, b := pageServer(t), pageServer(t)
	// Two servers on 127.0.0.1: one host. A name for the same address
	// is another host.
	other := strings.Replace(b.URL, "127.0.0.1", "localhost", 1)
	pc := &permissionClient{outcome: "allow-always"}
	_, us := webFetchTurn(t, "default", true, pc, a.URL+"/doc", b.URL+"/go", other+"/doc")
	if pc.count() != 2 {
		t.Fatalf("asked %d times, want 2 (127.0.0.1 once, localhost once)", pc.count())
	}
	if title := pc.asked[0].ToolCall.Title; title == nil || *title != a.URL+"/doc" {
		t.Errorf("first request's title %v, want the full URL", title)
	}
	if c := pc.asked[0].ToolCall.Content; len(c) == 0 || !strings.Contains(fmt.Sprint(c[len(c)-1]), "Sends a request to 127.0.0.1;") {
		t.Errorf("first request's content %+v", c)
	}
	if title := pc.asked[1].ToolCall.Title; title == nil || *title != other+"/doc" {
		t.Errorf("second request's title %v", title)
	}
	if got := finalStatuses(us); got != "completed,completed,completed" {
		t.Errorf("statuses %s", got)
	}

	pc = &permissionClient{outcome: "reject-once"}
	_, us = webFetchTurn(t, "acceptEdits", true, pc, a.URL+"/doc")
	if pc.count() != 1 || finalStatuses(us) != "failed" {
		t.Errorf("acceptEdits: asked %d, statuses %s", pc.count(), finalStatuses(us))
	}

	pc = &permissionClient{outcome: "allow-once"}
	_, us = webFetchTurn(t, "plan", true, pc, a.URL+"/doc")
	got := finalTexts(us)
	if pc.count() != 0 || len(got) != 1 || !strings.Contains(got[0], "plan mode") || !strings.HasPrefix(got[0], "failed") {
		t.Errorf("plan: asked %d, cards %q", pc.count(), got)
	}
}

// TestWebRateLimitE2E: a 429 is retried once after its Retry-After; a
// second one fails the call with the server's reason, and a failed call
// costs nothing.
func TestWebRateLimitE2E(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		// The first fetch gets one 429 and then its page; the second
		// gets 429 twice.
		if n == 1 || n >= 3 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"Fetch rate limit for this domain exceeded"}}`)
			return
		}
		fmt.Fprint(w, `{"title":"A","content":"page A"}`)
	}))
	defer api.Close()
	steps := []string{
		e2etest.ToolCallsAt(0, [2]string{"web_fetch", `{"url":"https://a.example/"}`}),
		e2etest.ToolCallsAt(1, [2]string{"web_fetch", `{"url":"https://a.example/b"}`}),
		e2etest.Text(nil, []string{"Done."}, "stop"),
	}
	web := &server.Web{BaseURL: api.URL, DeepSeek: true, Key: func() (string, error) { return "k", nil }}
	h := newHarness(t, harnessOpts{replay: e2etest.Replay(t, steps...), options: func(o *server.Options) { freeModel(o); o.Web = web }})
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "fetch twice"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	us := h.sessionUpdates()
	got := finalTexts(us)
	if len(got) != 2 || !strings.HasPrefix(got[0], "completed: **A**") ||
		!strings.Contains(got[1], "failed: Error: web fetch failed: "+api.URL+"/v1/tools/fetch answered HTTP 429: Fetch rate limit for this domain exceeded (rate limited, also after one retry") {
		t.Errorf("cards %q", got)
	}
	mu.Lock()
	n := calls
	mu.Unlock()
	if n != 4 {
		t.Errorf("%d API requests, want 4 (each fetch retried once)", n)
	}
	var costs []float64
	for _, u := range us {
		if uu, ok := u.(acp.UsageUpdate); ok && uu.Cost != nil {
			costs = append(costs, uu.Cost.Amount)
		}
	}
	if fmt.Sprint(costs) != "[0 0.00075 0.00075]" {
		t.Errorf("costs %v: one successful fetch, the failed one free", costs)
	}
}
