package toolweb

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// fakeAPI is a local fake of the Search and Fetch APIs that keeps every
// request it saw.
type fakeAPI struct {
	t    *testing.T
	mu   sync.Mutex
	seen []seenRequest
	// tooMany is how many requests get a 429 first.
	tooMany int
}

type seenRequest struct {
	Path, Auth string
	Body       map[string]any
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		f.t.Errorf("request body is not JSON: %q", b)
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		f.t.Errorf("request %s with content type %q", r.Method, r.Header.Get("Content-Type"))
	}
	f.mu.Lock()
	f.seen = append(f.seen, seenRequest{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body})
	limited := f.tooMany > 0
	if limited {
		f.tooMany--
	}
	f.mu.Unlock()
	if limited {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"per-domain fetch limit reached"}}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/tools/search":
		if body["query"] == "nothing" {
			fmt.Fprint(w, `{"results":[]}`)
			return
		}
		fmt.Fprint(w, `{"results":[{"title":"Go 1.26 release notes","url":"https://go.dev/doc/go1.26","summary":"What changed in Go 1.26.","snippet":"Go 1.26","rerank_score":2.1},`+
			`{"title":"","url":"https://example.com/b","snippet":"only a snippet"}]}`)
	case "/v1/tools/fetch":
		fmt.Fprintf(w, `{"title":"Fetched","content":"# Fetched\n\nbody of %s"}`, body["url"])
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeAPI) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.seen...)
}

func run(t *testing.T, tool tools.Tool, args string) (tools.Output, error) {
	t.Helper()
	return tool.Execute(context.Background(), &tools.Exec{CallID: "c1", Name: tool.Name, Args: json.RawMessage(args)})
}

func byName(t *testing.T, ts []tools.Tool, name string) tools.Tool {
	t.Helper()
	for _, tl := range ts {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s among %d", name, len(ts))
	return tools.Tool{}
}

func key() (string, error) { return "sk-test", nil }

func TestSearchAndFetchAPI(t *testing.T) {
	fake := &fakeAPI{t: t}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	ts := Tools(Config{BaseURL: srv.URL, DeepSeek: true, Key: key})
	out, err := run(t, byName(t, ts, SearchName), `{"query":"go 1.26 site:go.dev","count":2}`)
	if err != nil {
		t.Fatal(err)
	}
	text := tools.JoinText(out.Content)
	for _, want := range []string{`Search results for "go 1.26 site:go.dev" (2):`, "1. [Go 1.26 release notes](https://go.dev/doc/go1.26)",
		"   What changed in Go 1.26.", "2. [https://example.com/b](https://example.com/b)", "   only a snippet"} {
		if !strings.Contains(text, want) {
			t.Errorf("search text lacks %q:\n%s", want, text)
		}
	}
	if out.Charge == nil || out.Charge.Kind != "search" || out.Charge.Price["USD"] != 0.00075 || out.Charge.Price["CNY"] != 0.005 {
		t.Errorf("charge = %+v", out.Charge)
	}
	view := byName(t, ts, SearchName).ResultView(json.RawMessage(`{"query":"q"}`), tools.ResultInput{Content: out.Content, Meta: out.Meta})
	res, ok := view.(tools.GenericResult)
	if !ok || len(res.Content) != 2 || res.Content[0].Type != tools.ContentResourceLink || res.Content[0].URI != "https://go.dev/doc/go1.26" ||
		res.Content[0].Title != "Go 1.26 release notes" || res.Content[0].Description != "What changed in Go 1.26." {
		t.Errorf("search card = %#v", view)
	}

	empty, err := run(t, byName(t, ts, SearchName), `{"query":"nothing"}`)
	if err != nil || empty.Charge != nil || tools.JoinText(empty.Content) != `No results for "nothing".` {
		t.Errorf("empty search: %+v, %v", empty, err)
	}

	page, err := run(t, byName(t, ts, FetchName), `{"url":"https://docs.example.com/a"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := tools.JoinText(page.Content); got != "Title: Fetched\nURL: https://docs.example.com/a\n\n# Fetched\n\nbody of https://docs.example.com/a" {
		t.Errorf("fetch text = %q", got)
	}
	if page.Charge == nil || page.Charge.Kind != "fetch" {
		t.Errorf("fetch charge = %+v", page.Charge)
	}

	reqs := fake.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	want := []seenRequest{
		{Path: "/v1/tools/search", Auth: "Bearer sk-test", Body: map[string]any{"query": "go 1.26 site:go.dev", "count": float64(2)}},
		{Path: "/v1/tools/search", Auth: "Bearer sk-test", Body: map[string]any{"query": "nothing", "count": float64(DefaultCount)}},
		{Path: "/v1/tools/fetch", Auth: "Bearer sk-test", Body: map[string]any{"url": "https://docs.example.com/a"}},
	}
	for i := range want {
		if fmt.Sprint(reqs[i]) != fmt.Sprint(want[i]) {
			t.Errorf("request %d = %+v, want %+v", i, reqs[i], want[i])
		}
	}
}

// An override endpoint on another host than the base URL's gets no key.
func TestKeyOnlyToBaseHost(t *testing.T) {
	fake := &fakeAPI{t: t}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	other := httptest.NewServer(fake)
	defer other.Close()
	ts := Tools(Config{BaseURL: "https://api.example.com/v1", SearchURL: other.URL + "/v1/tools/search", Key: key})
	if len(ts) != 2 {
		t.Fatalf("tools: %d", len(ts))
	}
	if _, err := run(t, byName(t, ts, SearchName), `{"query":"q"}`); err != nil {
		t.Fatal(err)
	}
	if r := fake.requests(); len(r) != 1 || r[0].Auth != "" {
		t.Errorf("requests %+v", r)
	}
}

func TestOffered(t *testing.T) {
	names := func(ts []tools.Tool) string {
		var n []string
		for _, t := range ts {
			n = append(n, t.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names(Tools(Config{BaseURL: "https://api.deepseek.com", DeepSeek: true})); got != "web_search,web_fetch" {
		t.Errorf("deepseek: %s", got)
	}
	if got := names(Tools(Config{BaseURL: "https://api.openai.com/v1"})); got != "web_fetch" {
		t.Errorf("other: %s", got)
	}
	s, f := Endpoints(Config{BaseURL: "https://api.deepseek.com/beta", DeepSeek: true})
	if s != "https://api.deepseek.com/v1/tools/search" || f != "https://api.deepseek.com/v1/tools/fetch" {
		t.Errorf("endpoints %s %s", s, f)
	}
}

func TestRateLimitRetriedOnce(t *testing.T) {
	fake := &fakeAPI{t: t, tooMany: 1}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	w := newWeb(Config{BaseURL: srv.URL, DeepSeek: true, Key: key})
	var waited []time.Duration
	w.api.sleep = func(_ context.Context, d time.Duration) error { waited = append(waited, d); return nil }
	if _, err := run(t, w.fetchTool(), `{"url":"https://a.example/"}`); err != nil {
		t.Fatalf("one 429 then success: %v", err)
	}
	fake.tooMany = 2
	_, err := run(t, w.fetchTool(), `{"url":"https://a.example/"}`)
	if err == nil || !strings.Contains(err.Error(), "HTTP 429: per-domain fetch limit reached (rate limited, also after one retry") {
		t.Errorf("two 429s: %v", err)
	}
	if len(fake.requests()) != 4 || len(waited) != 2 || waited[0] != 0 {
		t.Errorf("%d requests, waits %v", len(fake.requests()), waited)
	}
	if d := retryAfter("120", time.Now(), time.Second, MaxRetryAfter); d != MaxRetryAfter {
		t.Errorf("bounded wait %v", d)
	}
	if d := retryAfter("", time.Now(), time.Second, MaxRetryAfter); d != time.Second {
		t.Errorf("default wait %v", d)
	}
}

// --record writes each web call to DIR/web-NNN.json; --replay answers
// from them without the network, in the same order.
func TestRecordReplay(t *testing.T) {
	fake := &fakeAPI{t: t}
	srv := httptest.NewServer(fake)
	dir := t.TempDir()
	rec := Tools(Config{BaseURL: srv.URL, DeepSeek: true, Key: key, Record: dir})
	if byName(t, rec, SearchName).ConcurrencySafe {
		t.Error("recording tools must run one at a time")
	}
	live1, err1 := run(t, byName(t, rec, SearchName), `{"query":"go"}`)
	live2, err2 := run(t, byName(t, rec, FetchName), `{"url":"https://b.example/"}`)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	srv.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "web-*.json"))
	if len(files) != 2 {
		t.Fatalf("recorded %v", files)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "web-001.json"))
	if !strings.Contains(string(b), `"kind": "search"`) || strings.Contains(string(b), "sk-test") {
		t.Errorf("web-001.json:\n%s", b)
	}
	rep := Tools(Config{BaseURL: srv.URL, DeepSeek: true, Key: key, Replay: dir})
	again1, err1 := run(t, byName(t, rep, SearchName), `{"query":"go"}`)
	again2, err2 := run(t, byName(t, rep, FetchName), `{"url":"https://b.example/"}`)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if tools.JoinText(again1.Content) != tools.JoinText(live1.Content) || tools.JoinText(again2.Content) != tools.JoinText(live2.Content) {
		t.Error("replayed answers differ from the recorded ones")
	}
	if _, err := run(t, byName(t, rep, SearchName), `{"query":"go"}`); err == nil || !strings.Contains(err.Error(), "no recorded web call web-003.json") {
		t.Errorf("past the recording: %v", err)
	}
}

// A direct fetch is recorded as the page it read and replayed without
// the network.
func TestRecordReplayDirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>Local</title><p>hello <i>there</i></p>")
	}))
	dir := t.TempDir()
	rec := Tools(Config{BaseURL: "https://api.example.com", AllowPrivate: true, Record: dir})
	live, err := run(t, byName(t, rec, FetchName), `{"url":"`+srv.URL+`/p"}`)
	srv.Close()
	if err != nil || !strings.Contains(tools.JoinText(live.Content), "hello *there*") || live.Charge != nil {
		t.Fatalf("live: %+v, %v", live, err)
	}
	rep := Tools(Config{BaseURL: "https://api.example.com", Replay: dir})
	again, err := run(t, byName(t, rep, FetchName), `{"url":"`+srv.URL+`/p"}`)
	if err != nil || tools.JoinText(again.Content) != tools.JoinText(live.Content) || string(again.Meta) != string(live.Meta) {
		t.Errorf("replayed %+v, %v", again, err)
	}
	if _, err := run(t, byName(t, Tools(Config{BaseURL: "https://api.example.com", DeepSeek: true, Replay: dir}), FetchName), `{"url":"https://x.example/"}`); err == nil ||
		!strings.Contains(err.Error(), "records a page call, but this call is a fetch") {
		t.Errorf("a fetch answered by a page recording: %v", err)
	}
}
