package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
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
	if got := fake.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
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
