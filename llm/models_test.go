package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestListModels: GET {base}/models with the key, the OpenAI list shape
// read in order (each id once, names and the context windows of three
// endpoint dialects kept), and every failure a coded *Error.
func TestListModels(t *testing.T) {
	const key = "sk-list-models-test-key"
	var auth, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, path = r.Header.Get("Authorization"), r.Method+" "+r.URL.Path
		_, _ = io.WriteString(w, `{"object":"list","data":[
			{"id":"deepseek-flash","object":"model","owned_by":"deepseek"},
			{"id":"or/model","name":"OR Model","context_length":163840},
			{"id":"groq-model","context_window":131072},
			{"id":"vllm-model","max_model_len":32768},
			{"id":"deepseek-flash"},{"id":"  "},{"object":"model"}]}`)
	}))
	defer srv.Close()
	got, err := HTTP{BaseURL: srv.URL + "/", APIKey: key}.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []ModelInfo{{ID: "deepseek-flash"}, {ID: "or/model", Name: "OR Model", ContextWindow: 163840},
		{ID: "groq-model", ContextWindow: 131072}, {ID: "vllm-model", ContextWindow: 32768}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("models\n got %+v\nwant %+v", got, want)
	}
	if auth != "Bearer "+key || path != "GET /models" {
		t.Errorf("request %q with %q", path, auth)
	}

	cases := []struct {
		name   string
		status int
		body   string
		code   string
	}{
		{"unauthorized", 401, `{"error":{"message":"Authentication Fails, Your api key: ` + key + ` is invalid"}}`, CodeAuth},
		{"server", 503, "Bad Gateway", CodeServer},
		{"junk", 200, "<html>hello</html>", CodeMalformed},
		{"no models", 200, `{"object":"list","data":[]}`, CodeMalformed},
		{"data not a list", 200, `{"data":{"id":"x"}}`, CodeMalformed},
		{"too big", 200, `{"data":[{"id":"` + strings.Repeat("x", modelsBodyLimit) + `"}]}`, CodeMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			}))
			defer srv.Close()
			_, err := HTTP{BaseURL: srv.URL, APIKey: key}.ListModels(context.Background())
			var e *Error
			if !errors.As(err, &e) || e.Code != c.code {
				t.Fatalf("error %v, want code %s", err, c.code)
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("the key is in the error: %v", err)
			}
		})
	}

	var asked atomic.Int32
	srv2 := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { asked.Add(1) }))
	defer srv2.Close()
	if _, err := (HTTP{BaseURL: srv2.URL}).ListModels(context.Background()); !isCode(err, CodeNoAPIKey) || asked.Load() != 0 {
		t.Errorf("without a key: %v after %d requests", err, asked.Load())
	}
	down := httptest.NewServer(http.NotFoundHandler())
	url := down.URL
	down.Close()
	if _, err := (HTTP{BaseURL: url, APIKey: key}).ListModels(context.Background()); !isCode(err, CodeConnection) {
		t.Errorf("closed port: %v", err)
	}
}

// TestModelListOnce: the list is asked for once however often it is
// started or waited for, and answers Info.
func TestModelListOnce(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		_, _ = io.WriteString(w, `{"data":[{"id":"a","context_length":1000},{"id":"b"}]}`)
	}))
	defer srv.Close()
	m := NewModelList(HTTP{BaseURL: srv.URL, APIKey: "k"}, 0, nil)
	defer m.Close()
	if _, ok := m.Models(); ok {
		t.Fatal("a list before any request")
	}
	for range 3 {
		m.Start()
	}
	models, ok := m.Wait(context.Background(), 10*time.Second)
	if !ok || len(models) != 2 {
		t.Fatalf("Wait = %v, %v", models, ok)
	}
	m.Wait(context.Background(), time.Second)
	if n := asked.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if mi, ok := m.Info("a"); !ok || mi.ContextWindow != 1000 {
		t.Errorf("Info(a) = %+v, %v", mi, ok)
	}
	if _, ok := m.Info("zzz"); ok {
		t.Error("Info of an unlisted model")
	}
	var nilList *ModelList
	if _, ok := nilList.Wait(context.Background(), time.Millisecond); ok || nilList.Done() != nil {
		t.Error("a nil list answered")
	}
	nilList.Close()
}

// TestModelListAbandoned: Wait gives up after its bound while the
// endpoint hangs, and Close ends the request at once instead of waiting
// for its 10 s timeout; a list never started is done when closed.
func TestModelListAbandoned(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		close(gone)
	}))
	defer srv.Close()
	m := NewModelList(HTTP{BaseURL: srv.URL, APIKey: "k"}, 0, nil)
	start := time.Now()
	if _, ok := m.Wait(context.Background(), 100*time.Millisecond); ok {
		t.Fatal("a list from a hanging endpoint")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Wait took %v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := m.Wait(ctx, time.Hour); ok {
		t.Error("Wait with an ended context answered a list")
	}
	m.Close()
	select {
	case <-m.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the request outlived Close by 5 s")
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the endpoint never saw the request end")
	}
	if err := m.Err(); !isCode(err, CodeCancelled) {
		t.Errorf("Err after Close = %v", err)
	}

	idle := NewModelList(HTTP{BaseURL: srv.URL, APIKey: "k"}, 0, nil)
	idle.Close()
	select {
	case <-idle.Done():
	case <-time.After(10 * time.Second):
		t.Error("a list never started is not done after Close")
	}
	idle.Start() // no request after Close
}

// TestMarshalRequestThinking: the thinking fields go at the top level of
// the body, only when set (DeepSeek's request shape).
func TestMarshalRequestThinking(t *testing.T) {
	cases := []struct {
		th   Thinking
		want string
	}{
		{Thinking{}, `{"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true}}`},
		{Thinking{Type: ThinkingDisabled}, `{"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true},"thinking":{"type":"disabled"}}`},
		{Thinking{Type: ThinkingEnabled}, `{"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true},"thinking":{"type":"enabled"}}`},
		{Thinking{Type: ThinkingEnabled, Effort: EffortMax}, `{"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true},"thinking":{"type":"enabled"},"reasoning_effort":"max"}`},
	}
	for _, c := range cases {
		b, err := MarshalRequest(Request{Model: "m", Thinking: c.th})
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.th, b, c.want)
		}
	}
}

// recordedUsage parses a recording of testdata/replay and returns the
// usage of its response.
func recordedUsage(t *testing.T, name string) Usage {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "replay", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := ParseStream(f, nil)
	if err != nil || res.Usage == nil {
		t.Fatalf("%s: %v, usage %v", name, err, res)
	}
	return *res.Usage
}

// TestDeepSeekCosts: the cost of recorded responses (DeepSeek's usage
// blocks: cache hits and misses) at the catalog's prices, at a peak and
// an off-peak hour, worked out by hand.
func TestDeepSeekCosts(t *testing.T) {
	peak := time.Date(2026, 11, 30, 2, 30, 0, 0, time.UTC)    // a Monday, 02:30 UTC
	offPeak := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // the same Monday, 12:00 UTC
	m := &Meter{Catalog: DeepSeek()}
	cases := []struct {
		recording, model string
		at               time.Time
		want             float64
	}{
		// 2304 hits, 72 misses, 37 out: 2304·0.006 + 72·0.30 + 37·1.20 = 79.824
		{"fs-read/001.sse", "deepseek-flash", peak, 79.824e-6},
		{"fs-read/001.sse", "deepseek-flash", offPeak, 39.912e-6},
		// 0 hits, 2363 misses, 22 out: 2363·1.32 + 22·3.96 = 3206.28
		{"text-turn/001.sse", "deepseek-v4-pro", peak, 3206.28e-6},
		{"text-turn/001.sse", "deepseek-v4-pro", offPeak, 1603.14e-6},
		// 2304 hits, 257 misses, 23 out, off-peak Flash: 6.912 + 38.55 + 13.8
		{"tool-call-turn/002.sse", "deepseek-flash", offPeak, 59.262e-6},
		// a retired name still billed as Flash
		{"tool-call-turn/002.sse", "deepseek-v4-flash", offPeak, 59.262e-6},
	}
	for _, c := range cases {
		p, ok := m.Price(c.model)
		if !ok || p.Currency != "USD" {
			t.Fatalf("%s: no USD price", c.model)
		}
		if got := p.Cost(recordedUsage(t, c.recording), c.at); !near(got, c.want) {
			t.Errorf("%s as %s at %v: %.10g, want %.10g", c.recording, c.model, c.at, got, c.want)
		}
	}
	if _, ok := m.Price("deepseek-chat"); ok {
		t.Error("deepseek-chat is priced; the pricing page no longer lists it")
	}
	if m.Size("deepseek-flash") != 1<<20 || m.Size("deepseek-chat") != DefaultContextWindow {
		t.Errorf("sizes %d, %d", m.Size("deepseek-flash"), m.Size("deepseek-chat"))
	}
	if (&Meter{ContextWindow: 32000}).Size("x") != 32000 || (*Meter)(nil).Size("x") != DefaultContextWindow {
		t.Error("the --context-window fallback or the default")
	}
}

func near(a, b float64) bool {
	d := a - b
	return d < 1e-15 && d > -1e-15
}

// TestDeepSeekPeakHours: 01:00–04:00 and 06:00–10:00 UTC on weekdays.
func TestDeepSeekPeakHours(t *testing.T) {
	at := func(day, h, min int) time.Time { return time.Date(2026, 11, day, h, min, 0, 0, time.UTC) }
	for _, c := range []struct {
		t    time.Time
		peak bool
	}{
		{at(30, 0, 59), false}, {at(30, 1, 0), true}, {at(30, 3, 59), true}, {at(30, 4, 0), false},
		{at(30, 5, 59), false}, {at(30, 6, 0), true}, {at(30, 9, 59), true}, {at(30, 10, 0), false},
		{at(27, 8, 0), true},                         // Friday
		{at(28, 2, 0), false}, {at(29, 7, 0), false}, // the weekend
		{time.Date(2026, 11, 30, 10, 30, 0, 0, time.FixedZone("CST", 8*3600)), true}, // 02:30 UTC
	} {
		if got := deepSeekPeak(c.t); got != c.peak {
			t.Errorf("%v: peak %v, want %v", c.t, got, c.peak)
		}
	}
}

// TestLoadCatalog: a price file's models, their prices and windows, and
// the errors that name the file and the field.
func TestLoadCatalog(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c, err := LoadCatalog(write("ok.json", `{"currency":"EUR","models":{
		"zeta":{"input":2,"output":8,"cachedInput":0.5},
		"alpha":{"input":1,"output":2,"contextWindow":65536},
		"window-only":{"contextWindow":4096}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Offer, []string{"alpha", "window-only", "zeta"}) {
		t.Errorf("offer %q", c.Offer)
	}
	z := c.Models["zeta"].Price
	if z == nil || z.Currency != "EUR" || z.Rates != (Rates{CacheHit: 0.5, CacheMiss: 2, Output: 8}) {
		t.Errorf("zeta %+v", z)
	}
	if a := c.Models["alpha"]; a.Price.Rates.CacheHit != 1 || a.ContextWindow != 65536 {
		t.Errorf("alpha %+v (cachedInput defaults to input)", a)
	}
	if w := c.Models["window-only"]; w.Price != nil || w.ContextWindow != 4096 {
		t.Errorf("window-only %+v", w)
	}
	// Merged over DeepSeek's catalog, the file wins for the models it names.
	merged := DeepSeek().Merge(Catalog{Offer: []string{"deepseek-flash", "x"}, Models: map[string]Known{
		"deepseek-flash": {Price: &Price{Currency: "USD", Rates: Rates{Output: 1}}}}})
	if !reflect.DeepEqual(merged.Offer, []string{"deepseek-flash", "deepseek-v4-pro", "x"}) ||
		merged.Models["deepseek-flash"].Price.Rates.Output != 1 || merged.Models["deepseek-flash"].ContextWindow != 1<<20 {
		t.Errorf("merged %+v", merged)
	}

	bad := map[string]string{
		"not json":   `{"models":`,
		"unknown":    `{"models":{"m":{"input":1,"output":1,"colour":"red"}}}`,
		"partial":    `{"models":{"m":{"input":1}}}`,
		"negative":   `{"models":{"m":{"input":1,"output":-1}}}`,
		"window":     `{"models":{"m":{"contextWindow":-5}}}`,
		"currency":   `{"currency":"dollars","models":{}}`,
		"empty name": `{"models":{" ":{"input":1,"output":1}}}`,
	}
	for name, body := range bad {
		p := write(strings.ReplaceAll(name, " ", "-")+".json", body)
		if _, err := LoadCatalog(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v does not name the file", name, err)
		}
	}
	if _, err := LoadCatalog(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestIsDeepSeek: only DeepSeek's own host.
func TestIsDeepSeek(t *testing.T) {
	for u, want := range map[string]bool{
		"https://api.deepseek.com": true, "https://API.DeepSeek.com/": true, "http://api.deepseek.com:443/x": true,
		"https://openrouter.ai/api/v1": false, "https://api.deepseek.com.evil.example": false, "::": false,
	} {
		if IsDeepSeek(u) != want {
			t.Errorf("IsDeepSeek(%q) = %v", u, !want)
		}
	}
}

// TestParseProvider: the two names in any case, the default by host,
// other names refused; Origin drops the path.
func TestParseProvider(t *testing.T) {
	for _, tc := range []struct{ s, base, want string }{
		{"", "https://api.deepseek.com", "deepseek"}, {"", "http://127.0.0.1:8080/v1", "openai"},
		{" OpenAI ", "https://api.deepseek.com", "openai"}, {"deepseek", "http://localhost:1", "deepseek"},
	} {
		if p, err := ParseProvider(tc.s, tc.base); err != nil || string(p) != tc.want {
			t.Errorf("ParseProvider(%q, %q) = %q, %v; want %q", tc.s, tc.base, p, err, tc.want)
		}
	}
	if _, err := ParseProvider("claude", ""); err == nil || !strings.Contains(err.Error(), `"claude"`) {
		t.Errorf("a bad name: %v", err)
	}
	if o, err := Origin("https://api.deepseek.com/v1/"); err != nil || o != "https://api.deepseek.com" {
		t.Errorf("Origin: %q, %v", o, err)
	}
	if _, err := Origin("/relative"); err == nil {
		t.Error("Origin of a relative URL")
	}
}

// TestParseBalance: DeepSeek's /user/balance body, amounts as decimal
// strings; junk is MALFORMED_RESPONSE.
func TestParseBalance(t *testing.T) {
	got, err := parseBalance([]byte(`{"is_available":true,"balance_infos":[{"currency":"CNY","total_balance":"110.00","granted_balance":"10.00","topped_up_balance":"100.00"},{"currency":"usd","total_balance":"0.52"}]}`))
	if err != nil || len(got) != 2 || got[0] != (Balance{"CNY", 110}) || got[1] != (Balance{"USD", 0.52}) {
		t.Errorf("parseBalance = %+v, %v", got, err)
	}
	for _, bad := range []string{`nope`, `{"balance_infos":[{"currency":"USD","total_balance":"lots"}]}`} {
		var le *Error
		if _, err := parseBalance([]byte(bad)); !errors.As(err, &le) || le.Code != CodeMalformed {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestIsModelNotFound: 400 and 404 answers that say the model does not
// exist, in DeepSeek's and OpenAI's words; other refusals are not.
func TestIsModelNotFound(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   bool
	}{
		{400, `{"error":{"message":"Model Not Exist","type":"invalid_request_error"}}`, true},
		{404, `{"error":{"message":"The model ` + "`gpt-9`" + ` does not exist or you do not have access to it."}}`, true},
		{404, `{"error":{"message":"model not found: qwen-x"}}`, true},
		{400, `{"error":{"message":"The ` + "`reasoning_content`" + ` in the thinking mode must be passed back to the API."}}`, false},
		{404, `not found`, false},
		{500, `{"error":{"message":"Model Not Exist"}}`, false},
	} {
		if got := IsModelNotFound(httpError(tc.status, []byte(tc.body))); got != tc.want {
			t.Errorf("%d %s: %v, want %v", tc.status, tc.body, got, tc.want)
		}
	}
	if IsModelNotFound(errors.New("Model Not Exist")) {
		t.Error("a plain error")
	}
}
