package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// fakeDeepSeek is a local stand-in for DeepSeek's API: GET /models lists
// models, POST /chat/completions answers with the next of replies (a
// stream body, or an HTTP error when status is set) and keeps every
// request body for the test to check.
type fakeDeepSeek struct {
	*httptest.Server
	models []string
	// balance is the /user/balance body ("" answers 404).
	balance string

	mu       sync.Mutex
	replies  []fakeReply
	requests []map[string]json.RawMessage
	balances int // /user/balance requests
}

// fakeReply is one answer of a fakeDeepSeek's chat endpoint: body as an
// event stream, or, with status set, that status and body as JSON.
type fakeReply struct {
	status int
	body   string
}

func newFakeDeepSeek(t *testing.T, models []string, replies ...fakeReply) *fakeDeepSeek {
	f := &fakeDeepSeek{models: models, replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeDeepSeek) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/user/balance":
		f.mu.Lock()
		f.balances++
		f.mu.Unlock()
		if f.balance == "" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, f.balance)
	case "/models":
		var data []string
		for _, m := range f.models {
			data = append(data, fmt.Sprintf(`{"id":%q,"object":"model","owned_by":"deepseek"}`, m))
		}
		_, _ = io.WriteString(w, `{"object":"list","data":[`+strings.Join(data, ",")+`]}`)
	case "/chat/completions":
		var body map[string]json.RawMessage
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.requests = append(f.requests, body)
		var rep fakeReply
		if len(f.replies) > 0 {
			rep, f.replies = f.replies[0], f.replies[1:]
		} else {
			rep = fakeReply{status: 500, body: `{"error":{"message":"no reply left in the test"}}`}
		}
		f.mu.Unlock()
		if rep.status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.status)
			_, _ = io.WriteString(w, rep.body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, rep.body)
	default:
		http.NotFound(w, r)
	}
}

// request returns the n-th chat request's body (from 1), failing t when
// there is none.
func (f *fakeDeepSeek) request(t *testing.T, n int) map[string]json.RawMessage {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if n > len(f.requests) {
		t.Fatalf("request %d of %d", n, len(f.requests))
	}
	return f.requests[n-1]
}

// count is the number of chat requests so far.
func (f *fakeDeepSeek) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// noticeInit is initialize with the session.notices capability.
const noticeInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"session":{"notices":{}}}}}`

// startDeepSeekProc starts the binary on f with the key set, titles off
// and args, and answers initialize (with notices).
func startDeepSeekProc(t *testing.T, f *fakeDeepSeek, args ...string) *proc {
	t.Helper()
	args = append([]string{"--base-url", f.URL, "--titles", "off"}, args...)
	p := startProcWith(t, []string{"DSH_API_KEY=sk-deepseek-test-0123456789", "DSH_MODEL=", "DSH_PROVIDER=", "DSH_THINKING="}, args...)
	p.send(t, noticeInit)
	p.next(t)
	return p
}

// promptLines sends a one-text prompt as request id and returns the
// lines up to its answer (the answer last).
func promptLines(t *testing.T, p *proc, id int, sid, text string) [][]byte {
	t.Helper()
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}}`, id, sid, text))
	return p.answer(t, id)
}

// updatesOf are the sessionUpdate kinds of lines, with the raw update.
func updatesOf(t *testing.T, lines [][]byte) (kinds []string, raw []json.RawMessage) {
	t.Helper()
	for _, l := range lines {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update json.RawMessage `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(l, &m) != nil || m.Method != "session/update" {
			continue
		}
		var u struct {
			Kind string `json:"sessionUpdate"`
		}
		_ = json.Unmarshal(m.Params.Update, &u)
		kinds = append(kinds, u.Kind)
		raw = append(raw, m.Params.Update)
	}
	return kinds, raw
}

// modelValue is the model option's current value in an answer or update
// holding configOptions.
func modelValue(t *testing.T, raw []byte) string {
	t.Helper()
	var m struct {
		Result struct {
			ConfigOptions []struct {
				ID           string `json:"id"`
				CurrentValue string `json:"currentValue"`
			} `json:"configOptions"`
		} `json:"result"`
		ConfigOptions []struct {
			ID           string `json:"id"`
			CurrentValue string `json:"currentValue"`
		} `json:"configOptions"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, o := range append(m.Result.ConfigOptions, m.ConfigOptions...) {
		if o.ID == "model" {
			return o.CurrentValue
		}
	}
	return ""
}

// TestProcessDeepSeekDefaults: a local stand-in for DeepSeek's API with
// --provider deepseek behaves as the real host: new sessions use
// deepseek-flash (the default model), the thinking option is offered and
// sends thinking enabled with reasoning_effort high, and a response is
// priced from DeepSeek's catalog (its usage_update has a cost). The same
// endpoint without --provider is a plain OpenAI-compatible one: no
// thinking fields, no cost.
func TestProcessDeepSeekDefaults(t *testing.T) {
	models := []string{"deepseek-flash", "deepseek-v4-pro"}
	u := e2etest.LiveUsage{Prompt: 1000, CacheHit: 640, Completion: 100, Reasoning: 40}
	t.Run("deepseek", func(t *testing.T) {
		f := newFakeDeepSeek(t, models, fakeReply{body: e2etest.LiveText(nil, []string{"ok"}, u)})
		p := startDeepSeekProc(t, f, "--provider", "deepseek")
		sid, ans := p.newSession(t, 2, t.TempDir(), "[]")
		if got := modelValue(t, ans); got != "deepseek-flash" {
			t.Errorf("new session's model %q, want deepseek-flash", got)
		}
		if !strings.Contains(string(ans), `"id":"thinking"`) || !strings.Contains(string(ans), `"currentValue":"high"`) {
			t.Errorf("no thinking option at high: %s", ans)
		}
		_, raw := updatesOf(t, promptLines(t, p, 3, sid, "hi"))
		req := f.request(t, 1)
		if string(req["model"]) != `"deepseek-flash"` || string(req["thinking"]) != `{"type":"enabled"}` || string(req["reasoning_effort"]) != `"high"` {
			t.Errorf("request model %s thinking %s reasoning_effort %s", req["model"], req["thinking"], req["reasoning_effort"])
		}
		if !anyContains(raw, `"sessionUpdate":"usage_update"`, `"cost":{`) {
			t.Errorf("no priced usage_update: %s", raw)
		}
		p.stdin.Close()
		p.wait(t)
	})
	t.Run("openai", func(t *testing.T) {
		f := newFakeDeepSeek(t, models, fakeReply{body: e2etest.LiveText(nil, []string{"ok"}, u)})
		p := startDeepSeekProc(t, f)
		sid, ans := p.newSession(t, 2, t.TempDir(), "[]")
		if strings.Contains(string(ans), `"id":"thinking"`) {
			t.Errorf("a plain endpoint got the thinking option: %s", ans)
		}
		_, raw := updatesOf(t, promptLines(t, p, 3, sid, "hi"))
		req := f.request(t, 1)
		if _, ok := req["thinking"]; ok {
			t.Errorf("thinking sent to a plain endpoint: %s", req["thinking"])
		}
		if _, ok := req["reasoning_effort"]; ok {
			t.Errorf("reasoning_effort sent to a plain endpoint")
		}
		if anyContains(raw, `"cost":{`) {
			t.Errorf("a plain endpoint's response was priced: %s", raw)
		}
		p.stdin.Close()
		p.wait(t)
	})
}

// anyContains reports whether one of raw holds every one of subs.
func anyContains(raw []json.RawMessage, subs ...string) bool {
	for _, r := range raw {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(string(r), s)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestProcessThinkingLevels: --thinking (or DSH_THINKING) starts
// sessions at a level, whose request fields are exactly DeepSeek's: off
// is thinking disabled with no effort; low, high and max are thinking
// enabled with that reasoning_effort; the old name on is high.
func TestProcessThinkingLevels(t *testing.T) {
	for _, tc := range []struct{ level, thinking, effort string }{
		{"off", `{"type":"disabled"}`, ""},
		{"low", `{"type":"enabled"}`, `"low"`},
		{"high", `{"type":"enabled"}`, `"high"`},
		{"max", `{"type":"enabled"}`, `"max"`},
		{"on", `{"type":"enabled"}`, `"high"`},
	} {
		t.Run(tc.level, func(t *testing.T) {
			f := newFakeDeepSeek(t, []string{"deepseek-flash"}, fakeReply{body: e2etest.Text(nil, []string{"ok"}, "stop")})
			p := startDeepSeekProc(t, f, "--provider", "deepseek", "--thinking", tc.level)
			sid, _ := p.newSession(t, 2, t.TempDir(), "[]")
			promptLines(t, p, 3, sid, "hi")
			req := f.request(t, 1)
			if got := string(req["thinking"]); got != tc.thinking {
				t.Errorf("thinking %s, want %s", got, tc.thinking)
			}
			if got := string(req["reasoning_effort"]); got != tc.effort {
				t.Errorf("reasoning_effort %s, want %s", got, tc.effort)
			}
			p.stdin.Close()
			p.wait(t)
		})
	}
}

// TestProcessRetiredModel: a session configured with deepseek-chat (an
// old DSH_MODEL) on DeepSeek's API, whose /models no longer lists it,
// moves to deepseek-flash at its first turn, once: the request uses
// deepseek-flash, the selector shows it, one notice says so; the next
// turn has no notice. On a plain endpoint nothing moves, and the
// endpoint's 400 "Model Not Exist" fails the prompt with a message
// naming the model and the selector.
func TestProcessRetiredModel(t *testing.T) {
	t.Run("migrated", func(t *testing.T) {
		ok := fakeReply{body: e2etest.Text(nil, []string{"ok"}, "stop")}
		f := newFakeDeepSeek(t, []string{"deepseek-flash", "deepseek-v4-pro"}, ok, ok)
		p := startDeepSeekProc(t, f, "--provider", "deepseek", "--model", "deepseek-chat")
		sid, ans := p.newSession(t, 2, t.TempDir(), "[]")
		if got := modelValue(t, ans); got != "deepseek-chat" {
			t.Fatalf("new session's model %q", got)
		}
		kinds, raw := updatesOf(t, promptLines(t, p, 3, sid, "hi"))
		if got := string(f.request(t, 1)["model"]); got != `"deepseek-flash"` {
			t.Errorf("first request's model %s, want deepseek-flash", got)
		}
		notices, moved := 0, false
		for i, k := range kinds {
			switch k {
			case "notice":
				notices++
				if !strings.Contains(string(raw[i]), "deepseek-chat") || !strings.Contains(string(raw[i]), "deepseek-flash") {
					t.Errorf("notice %s names not both models", raw[i])
				}
			case "config_option_update":
				moved = moved || modelValue(t, raw[i]) == "deepseek-flash"
			}
		}
		if notices != 1 || !moved {
			t.Errorf("%d notices, selector moved %v; updates %q", notices, moved, kinds)
		}
		kinds, _ = updatesOf(t, promptLines(t, p, 4, sid, "again"))
		for _, k := range kinds {
			if k == "notice" || k == "config_option_update" {
				t.Errorf("second turn: %s", k)
			}
		}
		if got := string(f.request(t, 2)["model"]); got != `"deepseek-flash"` {
			t.Errorf("second request's model %s", got)
		}
		p.stdin.Close()
		p.wait(t)
	})
	t.Run("rejected", func(t *testing.T) {
		f := newFakeDeepSeek(t, []string{"deepseek-flash"},
			fakeReply{status: 400, body: `{"error":{"message":"Model Not Exist","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`})
		p := startDeepSeekProc(t, f, "--model", "deepseek-chat")
		sid, _ := p.newSession(t, 2, t.TempDir(), "[]")
		lines := promptLines(t, p, 3, sid, "hi")
		var ans struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Data    struct {
					Reason string `json:"reason"`
					Status int    `json:"status"`
				} `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(lines[len(lines)-1], &ans); err != nil {
			t.Fatal(err)
		}
		e := ans.Error
		if e.Code != -32603 || e.Data.Reason != "MODEL_NOT_FOUND" || e.Data.Status != 400 ||
			!strings.Contains(e.Message, `"deepseek-chat"`) || !strings.Contains(e.Message, "Model selector") || !strings.Contains(e.Message, "Model Not Exist") {
			t.Errorf("answer %s", lines[len(lines)-1])
		}
		if f.count() != 1 || string(f.request(t, 1)["model"]) != `"deepseek-chat"` {
			t.Errorf("%d requests; a plain endpoint must keep the configured model", f.count())
		}
		p.stdin.Close()
		p.wait(t)
	})
}

// balanceBody is a /user/balance answer with total in currency.
func balanceBody(currency, total string) string {
	return `{"is_available":true,"balance_infos":[{"currency":"` + currency + `","total_balance":"` + total + `","granted_balance":"0.00","topped_up_balance":"` + total + `"}]}`
}

// TestProcessLowBalance: with DeepSeek's API the balance is read in the
// background at a turn's start; below --low-balance (default 1 USD) the
// session gets one notice, and later turns do not read it again; a
// balance above the threshold is read at most once per turn and told
// nothing. A plain endpoint's balance is never read.
func TestProcessLowBalance(t *testing.T) {
	ok := fakeReply{body: e2etest.Text(nil, []string{"ok"}, "stop")}
	t.Run("low", func(t *testing.T) {
		f := newFakeDeepSeek(t, []string{"deepseek-flash"}, ok, ok)
		f.balance = balanceBody("USD", "0.52")
		p := startDeepSeekProc(t, f, "--provider", "deepseek")
		sid, _ := p.newSession(t, 2, t.TempDir(), "[]")
		lines := promptLines(t, p, 3, sid, "one")
		for !hasNotice(t, lines, "0.52 USD") {
			lines = append(lines[:0], p.next(t))
		}
		kinds, _ := updatesOf(t, promptLines(t, p, 4, sid, "two"))
		for _, k := range kinds {
			if k == "notice" {
				t.Error("a second balance notice")
			}
		}
		f.mu.Lock()
		n := f.balances
		f.mu.Unlock()
		if n != 1 {
			t.Errorf("/user/balance read %d times, want once (the session was told)", n)
		}
		p.stdin.Close()
		if code, _ := p.wait(t); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		max  int
	}{
		{"enough", []string{"--provider", "deepseek"}, 2},
		{"plain endpoint", nil, 0},
		{"off", []string{"--provider", "deepseek", "--low-balance", "off"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeDeepSeek(t, []string{"deepseek-flash"}, ok, ok)
			f.balance = balanceBody("CNY", "5.00")
			if tc.max == 0 {
				f.balance = balanceBody("USD", "0.01")
			}
			p := startDeepSeekProc(t, f, tc.args...)
			sid, _ := p.newSession(t, 2, t.TempDir(), "[]")
			for i, text := range []string{"one", "two"} {
				if kinds, _ := updatesOf(t, promptLines(t, p, 3+i, sid, text)); slices.Contains(kinds, "notice") {
					t.Errorf("turn %d: a notice", i+1)
				}
			}
			// At exit the agent waits for a check under way: anything it
			// would say comes before the end of stdout.
			p.stdin.Close()
			if code, _ := p.wait(t); code != 0 {
				t.Errorf("exit %d", code)
			}
			f.mu.Lock()
			n := f.balances
			f.mu.Unlock()
			if n > tc.max || (tc.max > 0 && n == 0) {
				t.Errorf("/user/balance read %d times over 2 turns, want 1 to %d", n, tc.max)
			}
		})
	}
}

// hasNotice reports whether lines hold a notice update saying text.
func hasNotice(t *testing.T, lines [][]byte, text string) bool {
	t.Helper()
	kinds, raw := updatesOf(t, lines)
	for i, k := range kinds {
		if k == "notice" && strings.Contains(string(raw[i]), text) {
			return true
		}
	}
	return false
}
