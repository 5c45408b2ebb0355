package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
	"github.com/dsh-acp/dsh-acp/tools"
)

// endpoint is a fake OpenAI-compatible endpoint on 127.0.0.1: GET
// /models answers with models (or as modelsHandler says), POST
// /chat/completions with the next of bodies; every chat request body is
// kept.
type endpoint struct {
	srv *httptest.Server

	mu       sync.Mutex
	bodies   []string
	requests [][]byte
	listed   int // /models requests

	models        string // the /models body
	modelsHandler func(w http.ResponseWriter, r *http.Request)
}

func newEndpoint(t *testing.T, models string, bodies ...string) *endpoint {
	e := &endpoint{bodies: bodies, models: models}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *endpoint) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/models":
		e.mu.Lock()
		e.listed++
		h := e.modelsHandler
		e.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, e.models)
	case r.Method == http.MethodPost && r.URL.Path == "/chat/completions":
		b, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.requests = append(e.requests, b)
		n := len(e.requests)
		body := ""
		if n <= len(e.bodies) {
			body = e.bodies[n-1]
		}
		e.mu.Unlock()
		if body == "" {
			http.Error(w, `{"error":{"message":"no more answers"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	default:
		http.NotFound(w, r)
	}
}

// request returns the nth chat request body (1-based) decoded.
func (e *endpoint) request(t *testing.T, n int) map[string]json.RawMessage {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if n > len(e.requests) {
		t.Fatalf("only %d chat requests, want request %d", len(e.requests), n)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(e.requests[n-1], &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (e *endpoint) client() llm.HTTP {
	return llm.HTTP{BaseURL: e.srv.URL, APIKey: "sk-test-key-0123456789", Backoff: func(int) time.Duration { return time.Millisecond }}
}

// threeModels is a /models answer in the OpenAI list shape; one entry
// carries OpenRouter's context_length, one is repeated.
const threeModels = `{"object":"list","data":[` +
	`{"id":"alpha-1","object":"model","owned_by":"x"},` +
	`{"id":"beta-2","object":"model","owned_by":"x","context_length":65536,"name":"Beta Two"},` +
	`{"id":"alpha-1","object":"model"},` +
	`{"id":"gamma-3","object":"model"}]}`

// withEndpoint returns harness options for a server talking to e, with
// the given extra option settings.
func withEndpoint(e *endpoint, more func(*server.Options)) harnessOpts {
	return harnessOpts{model: e.client(), options: func(o *server.Options) {
		o.Models = e.client()
		o.ModelsWait = 5 * time.Second
		if more != nil {
			more(o)
		}
	}}
}

// optionsOf decodes a configOptions list.
func optionsOf(t *testing.T, raw json.RawMessage) []acp.SessionConfigOption {
	t.Helper()
	var opts []acp.SessionConfigOption
	if err := json.Unmarshal(raw, &opts); err != nil {
		t.Fatalf("configOptions %s: %v", raw, err)
	}
	return opts
}

// option returns the option with id from opts; ok is false when absent.
func option(opts []acp.SessionConfigOption, id string) (acp.SessionConfigOption, bool) {
	for _, o := range opts {
		if o.ID == id {
			return o, true
		}
	}
	return acp.SessionConfigOption{}, false
}

// values are a select option's value ids.
func values(o acp.SessionConfigOption) []string {
	var out []string
	for _, c := range o.Select.Options {
		out = append(out, c.Value)
	}
	return out
}

// newSession initializes h and opens a session; it returns the id and
// the answer's raw configOptions.
func newSession(t *testing.T, h *harness) (string, json.RawMessage) {
	t.Helper()
	h.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	var ns struct {
		SessionID     string          `json:"sessionId"`
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	from := len(agentMsgs(t, h, 0))
	h.mustCall("session/new", map[string]any{"cwd": h.cwd, "mcpServers": []any{}}, &ns)
	h.answerThenCommands(from, ns.SessionID, "session/new") // the slash commands follow the answer
	return ns.SessionID, ns.ConfigOptions
}

// setOption calls session/set_config_option and returns the answer's raw
// configOptions.
func setOption(t *testing.T, h *harness, sid, id, value string) json.RawMessage {
	t.Helper()
	var res struct {
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	h.mustCall("session/set_config_option", map[string]any{"sessionId": sid, "configId": id, "value": value}, &res)
	return res.ConfigOptions
}

// TestModelOptionFromModelsList: the model option lists the endpoint's
// /models (in its order, each once, the configured model added as not
// listed), session/set_config_option switches the model, the next
// request's `model` field is the new one, and the usage_update's size is
// the window the list gave for it.
func TestModelOptionFromModelsList(t *testing.T) {
	bodies := []string{e2etest.Text(nil, []string{"one"}, "stop"), e2etest.Text(nil, []string{"two"}, "stop")}
	e := newEndpoint(t, threeModels, bodies...)
	h := newHarness(t, withEndpoint(e, nil))
	sid, raw := newSession(t, h)
	opts := optionsOf(t, raw)
	if len(opts) != 3 || !reflect.DeepEqual([]string{opts[0].ID, opts[1].ID, opts[2].ID}, []string{"model", "subagent_model", "mode"}) {
		t.Fatalf("options %s, want model, subagent_model and mode only (no thinking on this endpoint)", raw)
	}
	model := opts[0]
	if model.Category != acp.CategoryModel || model.Select.CurrentValue != "deepseek-chat" ||
		!reflect.DeepEqual(values(model), []string{"alpha-1", "beta-2", "gamma-3", "deepseek-chat"}) {
		t.Errorf("model option %s", raw)
	}
	if model.Select.Options[1].Name != "Beta Two" || model.Select.Options[3].Description == "" {
		t.Errorf("names and the not-listed note: %+v", model.Select.Options)
	}
	if stop, err := h.prompt(sid, "first"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt: %q, %v", stop, err)
	}
	after := optionsOf(t, setOption(t, h, sid, "model", "beta-2"))
	if m, _ := option(after, "model"); m.Select.CurrentValue != "beta-2" || len(after) != 3 {
		t.Errorf("set_config_option answer %+v", after)
	}
	if stop, err := h.prompt(sid, "second"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt: %q, %v", stop, err)
	}
	if got, want := str(e.request(t, 1)["model"]), "deepseek-chat"; got != want {
		t.Errorf("first request model %q, want %q", got, want)
	}
	if got, want := str(e.request(t, 2)["model"]), "beta-2"; got != want {
		t.Errorf("request after the switch: model %q, want %q", got, want)
	}
	var sizes []uint64
	for _, u := range h.sessionUpdates() {
		if uu, ok := u.(acp.UsageUpdate); ok {
			sizes = append(sizes, uu.Size)
			if n := len(sizes); n > len(bodies) {
				continue
			} else if want := e2etest.UsageOf(t, bodies[n-1]).Used(); uu.Used != uint64(want) || uu.Cost != nil {
				t.Errorf("usage %+v, want used %d (that response's prompt + completion) and no cost (no price known)", uu, want)
			}
		}
	}
	if !reflect.DeepEqual(sizes, []uint64{llm.DefaultContextWindow, 65536}) {
		t.Errorf("usage sizes %v, want the default then beta-2's listed window", sizes)
	}
	e.mu.Lock()
	listed := e.listed
	e.mu.Unlock()
	if listed != 1 {
		t.Errorf("/models asked %d times, want once per process", listed)
	}
}

// TestThinkingRequestFields: each thinking level sends exactly the
// request fields DeepSeek documents (thinking at the top level, the
// effort low, high or max with it; off sends no effort), from the next
// request on; the old name "on" is high; an endpoint without the option
// sends neither and refuses the option.
func TestThinkingRequestFields(t *testing.T) {
	want := []struct {
		level, thinking, effort string
	}{
		{"high", `{"type":"enabled"}`, `"high"`}, // the default level
		{"off", `{"type":"disabled"}`, ""},
		{"low", `{"type":"enabled"}`, `"low"`},
		{"max", `{"type":"enabled"}`, `"max"`},
		{"on", `{"type":"enabled"}`, `"high"`}, // the old name
	}
	var bodies []string
	for range want {
		bodies = append(bodies, e2etest.Text(nil, []string{"ok"}, "stop"))
	}
	e := newEndpoint(t, threeModels, bodies...)
	h := newHarness(t, withEndpoint(e, func(o *server.Options) { o.Thinking = true }))
	sid, raw := newSession(t, h)
	th, ok := option(optionsOf(t, raw), "thinking")
	if !ok || th.Category != acp.CategoryThoughtLevel || th.Select.CurrentValue != "high" ||
		!reflect.DeepEqual(values(th), []string{"off", "low", "high", "max"}) {
		t.Fatalf("thinking option %s", raw)
	}
	for i, w := range want {
		if i > 0 {
			canon := w.level
			if canon == "on" {
				canon = "high"
			}
			if got, _ := option(optionsOf(t, setOption(t, h, sid, "thinking", w.level)), "thinking"); got.Select.CurrentValue != canon {
				t.Errorf("thinking after set %q: %q", w.level, got.Select.CurrentValue)
			}
		}
		if _, err := h.prompt(sid, "go"); err != nil {
			t.Fatal(err)
		}
		req := e.request(t, i+1)
		if got := string(req["thinking"]); got != w.thinking {
			t.Errorf("level %s: thinking %s, want %s", w.level, got, w.thinking)
		}
		if got := string(req["reasoning_effort"]); got != w.effort {
			t.Errorf("level %s: reasoning_effort %s, want %q", w.level, got, w.effort)
		}
	}

	plain := newEndpoint(t, threeModels, e2etest.Text(nil, []string{"ok"}, "stop"))
	h2 := newHarness(t, withEndpoint(plain, nil))
	sid2, _ := newSession(t, h2)
	if code, msg := rpcError(t, h2, "session/set_config_option", map[string]any{"sessionId": sid2, "configId": "thinking", "value": "max"}); code != acp.CodeInvalidParams ||
		!strings.Contains(msg, `"model", "subagent_model", "mode"`) {
		t.Errorf("thinking where not offered: %d %q", code, msg)
	}
	if _, err := h2.prompt(sid2, "go"); err != nil {
		t.Fatal(err)
	}
	req := plain.request(t, 1)
	if _, ok := req["thinking"]; ok {
		t.Errorf("thinking sent without the option: %s", req["thinking"])
	}
	if _, ok := req["reasoning_effort"]; ok {
		t.Errorf("reasoning_effort sent without the option")
	}
}

// TestConfigOptionErrors: an unknown option or value, a boolean for a
// select, and an unknown session are refused with -32602 (-32002 for
// the session), naming what is valid.
func TestConfigOptionErrors(t *testing.T) {
	e := newEndpoint(t, threeModels)
	h := newHarness(t, withEndpoint(e, func(o *server.Options) { o.Thinking = true }))
	sid, _ := newSession(t, h)
	cases := []struct {
		params map[string]any
		code   int
		says   []string
	}{
		{map[string]any{"sessionId": sid, "configId": "colour", "value": "red"}, acp.CodeInvalidParams, []string{`"colour"`, `"model", "subagent_model", "thinking", "mode"`}},
		{map[string]any{"sessionId": sid, "configId": "model", "value": "omega"}, acp.CodeInvalidParams, []string{`"omega"`, `"alpha-1", "beta-2", "gamma-3", "deepseek-chat"`}},
		{map[string]any{"sessionId": sid, "configId": "thinking", "value": "ultra"}, acp.CodeInvalidParams, []string{`"off", "low", "high", "max"`}},
		{map[string]any{"sessionId": sid, "configId": "mode", "value": "yolo"}, acp.CodeInvalidParams, []string{`"default", "acceptEdits", "plan", "bypassPermissions"`}},
		{map[string]any{"sessionId": sid, "configId": "mode", "type": "boolean", "value": true}, acp.CodeInvalidParams, []string{"boolean"}},
		{map[string]any{"sessionId": "sess_nope", "configId": "model", "value": "alpha-1"}, acp.CodeResourceNotFound, []string{"sess_nope"}},
		{map[string]any{"sessionId": sid, "configId": "model"}, acp.CodeInvalidParams, []string{"value"}},
	}
	for _, c := range cases {
		code, msg := rpcError(t, h, "session/set_config_option", c.params)
		if code != c.code {
			t.Errorf("%v: code %d (%s), want %d", c.params, code, msg, c.code)
		}
		for _, s := range c.says {
			if !strings.Contains(msg, s) {
				t.Errorf("%v: message %q does not say %s", c.params, msg, s)
			}
		}
	}
	// Nothing was changed by the refused calls.
	opts := optionsOf(t, setOption(t, h, sid, "model", "deepseek-chat"))
	for id, want := range map[string]string{"model": "deepseek-chat", "thinking": "high", "mode": "bypassPermissions"} {
		if o, _ := option(opts, id); o.Select.CurrentValue != want {
			t.Errorf("%s = %q after refused changes, want %q", id, o.Select.CurrentValue, want)
		}
	}
}

// agentLine is one message the agent wrote, for order checks.
type agentLine struct {
	id     string // the response's id, "" for a notification
	kind   string // the session/update kind
	update json.RawMessage
	result json.RawMessage
}

// String shows a line in failure messages.
func (l agentLine) String() string {
	if l.id != "" {
		return "answer " + l.id + " " + string(l.result)
	}
	return l.kind + " " + string(l.update)
}

func agentLines(t *testing.T, h *harness) []agentLine {
	t.Helper()
	var out []agentLine
	for _, raw := range h.tr.AgentLines() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Update json.RawMessage `json:"update"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		l := agentLine{result: m.Result, update: m.Params.Update}
		if m.Method == "" {
			l.id = string(m.ID)
		}
		if m.Method == "session/update" {
			var k struct {
				Kind string `json:"sessionUpdate"`
			}
			_ = json.Unmarshal(m.Params.Update, &k)
			l.kind = k.Kind
		}
		out = append(out, l)
	}
	return out
}

// waitLines waits until the agent has written n lines.
func waitLines(t *testing.T, h *harness, n int) []agentLine {
	t.Helper()
	waitFor(t, func() bool { return len(h.tr.AgentLines()) >= n })
	return agentLines(t, h)
}

// TestModeSurfacesInSync: session/set_mode answers, then announces the
// option list (config_option_update) with the new mode; the mode option
// answers with the whole list, then announces current_mode_update; both
// ways the other surface follows, and an unchanged mode announces
// nothing.
func TestModeSurfacesInSync(t *testing.T) {
	e := newEndpoint(t, threeModels)
	h := newHarness(t, withEndpoint(e, nil))
	sid, _ := newSession(t, h)

	start := len(h.tr.AgentLines())
	h.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "plan"}, nil)
	lines := waitLines(t, h, start+2)[start:]
	if lines[0].id == "" || lines[1].kind != "config_option_update" {
		t.Fatalf("after set_mode: %+v, want the answer then a config_option_update", lines)
	}
	var cu acp.ConfigOptionUpdate
	if err := json.Unmarshal(lines[1].update, &cu); err != nil {
		t.Fatal(err)
	}
	if m, _ := option(cu.ConfigOptions, "mode"); m.Select.CurrentValue != "plan" || len(cu.ConfigOptions) != 3 {
		t.Errorf("config_option_update after set_mode: %s", lines[1].update)
	}

	start = len(h.tr.AgentLines())
	opts := optionsOf(t, setOption(t, h, sid, "mode", "acceptEdits"))
	if m, _ := option(opts, "mode"); m.Select.CurrentValue != "acceptEdits" {
		t.Errorf("mode option answer %+v", opts)
	}
	lines = waitLines(t, h, start+2)[start:]
	if lines[0].id == "" || lines[1].kind != "current_mode_update" || !strings.Contains(string(lines[1].update), `"currentModeId":"acceptEdits"`) {
		t.Fatalf("after the mode option: %+v, want the answer then current_mode_update acceptEdits", lines)
	}

	// The same mode again changes nothing and announces nothing.
	start = len(h.tr.AgentLines())
	h.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "acceptEdits"}, nil)
	setOption(t, h, sid, "mode", "acceptEdits")
	h.mustCall("session/set_config_option", map[string]any{"sessionId": sid, "configId": "model", "value": "gamma-3"}, nil)
	time.Sleep(100 * time.Millisecond)
	for _, l := range agentLines(t, h)[start:] {
		if l.id == "" {
			t.Errorf("unchanged mode or a model change announced %s %s", l.kind, l.update)
		}
	}
	// The mode in force is the one both surfaces show: acceptEdits.
	var res struct {
		Modes struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	h.mustCall("session/load", map[string]any{"sessionId": sid, "cwd": h.cwd, "mcpServers": []any{}}, &res)
	m, _ := option(optionsOf(t, res.ConfigOptions), "mode")
	if res.Modes.CurrentModeID != "acceptEdits" || m.Select.CurrentValue != "acceptEdits" {
		t.Errorf("reconnect: modes %q, mode option %q", res.Modes.CurrentModeID, m.Select.CurrentValue)
	}
}

// TestDefaultConfigOptionsRightAfterNew: what Zed does with its
// default_config_options (set_config_option for each, right after the
// session/new answer, before any prompt) takes effect: the first
// request uses the chosen model and thinking level, and the chosen mode
// decides the permission.
func TestDefaultConfigOptionsRightAfterNew(t *testing.T) {
	e := newEndpoint(t, threeModels, e2etest.ToolCalls([2]string{"card_diff", `{"path":"a.txt"}`}), e2etest.Text(nil, []string{"ok"}, "stop"))
	o := withEndpoint(e, func(o *server.Options) { o.Thinking = true; o.Mode = "default" })
	o.mode = "default"
	h := newHarness(t, o)
	pc := &permissionClient{outcome: "allow-once"}
	h.client.OnRequest = pc.handle
	sid, _ := newSession(t, h)
	for _, kv := range [][2]string{{"model", "gamma-3"}, {"thinking", "max"}, {"mode", "bypassPermissions"}} {
		setOption(t, h, sid, kv[0], kv[1])
	}
	if stop, err := h.prompt(sid, "edit"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt: %q, %v", stop, err)
	}
	req := e.request(t, 1)
	if str(req["model"]) != "gamma-3" || string(req["reasoning_effort"]) != `"max"` {
		t.Errorf("first request: model %s, reasoning_effort %s", req["model"], req["reasoning_effort"])
	}
	if pc.count() != 0 {
		t.Errorf("asked %d times after the default mode bypassPermissions was applied", pc.count())
	}
}

// TestModelsListArrivesLate: when /models has not answered within the
// wait, session/new answers with the configured and known models, and
// the list, once it arrives, is announced as a config_option_update
// after that answer.
func TestModelsListArrivesLate(t *testing.T) {
	release := make(chan struct{})
	e := newEndpoint(t, threeModels)
	e.modelsHandler = func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, threeModels)
	}
	o := withEndpoint(e, func(o *server.Options) {
		o.ModelsWait = 50 * time.Millisecond
		o.Catalog = llm.Catalog{Offer: []string{"known-a", "deepseek-chat"}}
	})
	h := newHarness(t, o)
	sid, raw := newSession(t, h)
	if m, _ := option(optionsOf(t, raw), "model"); !reflect.DeepEqual(values(m), []string{"deepseek-chat", "known-a"}) {
		t.Fatalf("model option before the list: %s", raw)
	}
	start := len(h.tr.AgentLines())
	close(release)
	lines := waitLines(t, h, start+1)[start:]
	if lines[0].kind != "config_option_update" {
		t.Fatalf("after the list arrived: %+v", lines)
	}
	var cu acp.ConfigOptionUpdate
	_ = json.Unmarshal(lines[0].update, &cu)
	if m, _ := option(cu.ConfigOptions, "model"); m.Select.CurrentValue != "deepseek-chat" ||
		!reflect.DeepEqual(values(m), []string{"alpha-1", "beta-2", "gamma-3", "deepseek-chat"}) {
		t.Errorf("late config_option_update %s", lines[0].update)
	}
	// A listed model can now be chosen.
	setOption(t, h, sid, "model", "beta-2")
	// A session opened now gets the list at once, and no update.
	_, raw2 := newSession(t, h)
	if m, _ := option(optionsOf(t, raw2), "model"); len(values(m)) != 4 {
		t.Errorf("second session's model option %s", raw2)
	}
	time.Sleep(50 * time.Millisecond)
	n := 0
	for _, l := range agentLines(t, h) {
		if l.kind == "config_option_update" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d config_option_updates, want exactly the one for the late list", n)
	}
}

// TestModelsListBadInput: an endpoint whose /models fails, returns junk,
// or does not answer in time: the model option lists the configured
// model, one warning line is logged, and the session works.
func TestModelsListBadInput(t *testing.T) {
	cases := map[string]func(w http.ResponseWriter, r *http.Request){
		"500": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":{"message":"models are down"}}`, http.StatusInternalServerError)
		},
		"junk": func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "<html>not json</html>") },
		"empty": func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"object":"list","data":[]}`)
		},
		"wrong shape": func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"data":{"id":"x"}}`) },
		"timeout":     func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
	}
	for name, handler := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEndpoint(t, "", e2etest.Text(nil, []string{"fine"}, "stop"))
			e.modelsHandler = handler
			var log syncBuffer
			o := withEndpoint(e, func(o *server.Options) { o.ModelsTimeout = 200 * time.Millisecond })
			o.logs = &log
			h := newHarness(t, o)
			sid, raw := newSession(t, h)
			if m, _ := option(optionsOf(t, raw), "model"); !reflect.DeepEqual(values(m), []string{"deepseek-chat"}) {
				t.Errorf("model option %s", raw)
			}
			if stop, err := h.prompt(sid, "hi"); err != nil || stop != acp.StopEndTurn {
				t.Fatalf("prompt: %q, %v", stop, err)
			}
			waitFor(t, func() bool { return strings.Contains(log.String(), "level=WARN") })
			warnings := strings.Count(log.String(), "level=WARN")
			if warnings != 1 || !strings.Contains(log.String(), "could not list the endpoint's models") {
				t.Errorf("%d warnings, want one about the model list:\n%s", warnings, log.String())
			}
			if strings.Contains(log.String(), "sk-test-key") {
				t.Error("the API key reached the log")
			}
		})
	}
}

// flatPrices prices the endpoint's models at fixed rates (USD per 1M
// tokens: cache hit 0.5, cache miss 2, output 8); its window for beta-2
// loses to the one the endpoint's list gives.
func flatPrices() llm.Catalog {
	p := &llm.Price{Currency: "USD", Rates: llm.Rates{CacheHit: 0.5, CacheMiss: 2, Output: 8}}
	return llm.Catalog{Models: map[string]llm.Known{
		"deepseek-chat": {Price: p}, "beta-2": {Price: p, ContextWindow: 4096},
	}}
}

// flatCost is the cost of usage u at flatPrices, in USD: cache hits at
// 0.5, misses at 2, completion at 8 per 1M tokens.
func flatCost(u e2etest.Usage) float64 {
	return (float64(u.CacheHit)*0.5 + float64(u.CacheMiss)*2 + float64(u.Completion)*8) / 1e6
}

// TestUsageCost: every model response is followed by a usage_update
// whose used is that response's prompt + completion tokens and whose
// cost is the session's running total at the flat prices (each response
// has usage figures of its own, so one taken for another shows). A model
// without a price drops the cost from then on.
func TestUsageCost(t *testing.T) {
	bodies := []string{e2etest.ToolCalls([2]string{"card_generic", `{"path":"a"}`}), e2etest.Text(nil, []string{"one"}, "stop"),
		e2etest.Text([]string{"Reasoning at some length."}, []string{"two, a longer answer"}, "stop"), e2etest.Text(nil, []string{"three"}, "stop")}
	e := newEndpoint(t, threeModels, bodies...)
	h := newHarness(t, withEndpoint(e, func(o *server.Options) { o.Catalog = flatPrices() }))
	sid, _ := newSession(t, h)
	for _, p := range []string{"first", "second"} {
		if _, err := h.prompt(sid, p); err != nil {
			t.Fatal(err)
		}
	}
	setOption(t, h, sid, "model", "gamma-3")
	if _, err := h.prompt(sid, "third"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range h.sessionUpdates() {
		if uu, ok := u.(acp.UsageUpdate); ok {
			c := "none"
			if uu.Cost != nil {
				c = fmt.Sprintf("%.9f %s", uu.Cost.Amount, uu.Cost.Currency)
			}
			got = append(got, fmt.Sprintf("%d/%d %s", uu.Used, uu.Size, c))
		}
	}
	var want []string
	total := 0.0
	for i, b := range bodies {
		u := e2etest.UsageOf(t, b)
		if i == 3 {
			// gamma-3 has no price.
			want = append(want, fmt.Sprintf("%d/128000 none", u.Used()))
			break
		}
		total += flatCost(u)
		want = append(want, fmt.Sprintf("%d/128000 %.9f USD", u.Used(), total))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("usage updates\n got %q\nwant %q", got, want)
	}
	// The arithmetic on one response spelled out: 256 cache hits, 31
	// misses and 6 completion tokens (5 of the reasoning "The answer is
	// ready.", 1 of "one") are (256·0.5 + 31·2 + 6·8) / 1e6 USD.
	if u := e2etest.UsageOf(t, bodies[1]); u != (e2etest.Usage{Prompt: 287, Completion: 6, Reasoning: 5, CacheHit: 256, CacheMiss: 31}) ||
		math.Abs(flatCost(u)-0.000238) > 1e-12 {
		t.Errorf("usage of the second response %+v, cost %v", u, flatCost(u))
	}
}

// TestConfigAndUsageRestoredByLoad: the model, thinking level and mode
// chosen with set_config_option are logged; a second process's
// session/load replays the usage_updates byte for byte, answers with the
// same option list byte for byte, uses the restored model and thinking
// for its next request, and lists the running total in session/list's
// _meta.
func TestConfigAndUsageRestoredByLoad(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	bodies := []string{e2etest.Text(nil, []string{"one"}, "stop"),
		e2etest.ToolCalls([2]string{"card_generic", `{"path":"a"}`}), e2etest.Text(nil, []string{"two"}, "stop"),
		e2etest.Text(nil, []string{"three"}, "stop")}
	e := newEndpoint(t, threeModels, bodies...)
	opts := func() harnessOpts {
		o := withEndpoint(e, func(o *server.Options) { o.Thinking = true; o.Catalog = flatPrices() })
		o.stateDir, o.cwd = state, cwd
		return o
	}
	h := newHarness(t, opts())
	sid, _ := newSession(t, h)
	if _, err := h.prompt(sid, "first"); err != nil {
		t.Fatal(err)
	}
	setOption(t, h, sid, "model", "beta-2")
	setOption(t, h, sid, "thinking", "high")
	last := setOption(t, h, sid, "mode", "plan")
	if _, err := h.prompt(sid, "second"); err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, l := range agentLines(t, h) {
		if l.kind == "usage_update" {
			live = append(live, string(l.update))
		}
	}
	if len(live) != 3 || !strings.Contains(live[2], `"size":65536`) {
		t.Fatalf("live usage updates %q", live)
	}
	h.stop()

	h2 := newHarness(t, opts())
	h2.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	start := len(h2.tr.AgentLines())
	var res struct {
		ConfigOptions json.RawMessage `json:"configOptions"`
		Modes         struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
	}
	h2.mustCall("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, &res)
	var replayed []string
	for _, l := range agentLines(t, h2)[start:] {
		if l.kind == "usage_update" {
			replayed = append(replayed, string(l.update))
		}
	}
	if !reflect.DeepEqual(replayed, live) {
		t.Errorf("replayed usage updates\n got %q\nwant %q", replayed, live)
	}
	if !bytes.Equal(res.ConfigOptions, last) || res.Modes.CurrentModeID != "plan" {
		t.Errorf("load answer options\n got %s\nwant %s (mode %q)", res.ConfigOptions, last, res.Modes.CurrentModeID)
	}
	if _, err := h2.prompt(sid, "third"); err != nil {
		t.Fatal(err)
	}
	req := e.request(t, 4)
	if str(req["model"]) != "beta-2" || string(req["reasoning_effort"]) != `"high"` {
		t.Errorf("request after load: model %s effort %s", req["model"], req["reasoning_effort"])
	}
	// The running total goes on from the logged one: four responses.
	var totals []float64
	for _, u := range h2.sessionUpdates() {
		if uu, ok := u.(acp.UsageUpdate); ok && uu.Cost != nil {
			totals = append(totals, uu.Cost.Amount)
		}
	}
	total := 0.0
	for _, b := range bodies {
		total += flatCost(e2etest.UsageOf(t, b))
	}
	if n := len(totals); n == 0 || math.Abs(totals[n-1]-total) > 1e-12 {
		t.Errorf("running totals after load %v, want the last %v", totals, total)
	}
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Meta      struct {
				Usage struct {
					Used uint64   `json:"used"`
					Size uint64   `json:"size"`
					Cost acp.Cost `json:"cost"`
				} `json:"usage"`
			} `json:"_meta"`
		} `json:"sessions"`
	}
	h2.mustCall("session/list", map[string]any{}, &list)
	if used := uint64(e2etest.UsageOf(t, bodies[3]).Used()); len(list.Sessions) != 1 || list.Sessions[0].Meta.Usage.Used != used || list.Sessions[0].Meta.Usage.Size != 65536 ||
		math.Abs(list.Sessions[0].Meta.Usage.Cost.Amount-total) > 1e-12 || list.Sessions[0].Meta.Usage.Cost.Currency != "USD" {
		t.Errorf("session/list %+v", list)
	}
	if !slices.ContainsFunc(agentLines(t, h2)[start:], func(l agentLine) bool { return l.kind == "current_mode_update" }) {
		t.Error("the replay does not say the mode was changed")
	}
}

// TestModelSwitchWithinTurn: a model chosen while a turn runs (here
// while a tool call waits) is the `model` of the turn's next request.
func TestModelSwitchWithinTurn(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	wait := tools.Tool{Name: "wait_here", Parameters: []byte(`{"type":"object"}`), Class: tools.ClassReadOnly,
		Execute: func(ctx context.Context, _ *tools.Exec) (tools.Output, error) {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return tools.Output{Content: []tools.Content{tools.Text("waited")}}, nil
		}}
	e := newEndpoint(t, threeModels, e2etest.ToolCalls([2]string{"wait_here", `{}`}), e2etest.Text(nil, []string{"done"}, "stop"))
	o := withEndpoint(e, nil)
	o.tools = []tools.Tool{wait}
	h := newHarness(t, o)
	sid, _ := newSession(t, h)
	done := make(chan error, 1)
	go func() { _, err := h.prompt(sid, "go"); done <- err }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool did not start")
	}
	setOption(t, h, sid, "model", "gamma-3")
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if a, b := str(e.request(t, 1)["model"]), str(e.request(t, 2)["model"]); a != "deepseek-chat" || b != "gamma-3" {
		t.Errorf("models of the turn's requests: %q then %q, want deepseek-chat then gamma-3", a, b)
	}
}

// TestConfigRestoredByResumeAndFork: session/resume in a new process
// answers with the logged model, thinking level and mode (the log read
// lazily) and the next request uses them; a fork of a live session
// starts with the source's choices, each session then on its own.
func TestConfigRestoredByResumeAndFork(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	e := newEndpoint(t, threeModels, e2etest.Text(nil, []string{"one"}, "stop"), e2etest.Text(nil, []string{"two"}, "stop"),
		e2etest.Text(nil, []string{"three"}, "stop"))
	opts := func() harnessOpts {
		o := withEndpoint(e, func(o *server.Options) { o.Thinking = true })
		o.stateDir, o.cwd = state, cwd
		return o
	}
	h := newHarness(t, opts())
	sid, _ := newSession(t, h)
	if _, err := h.prompt(sid, "first"); err != nil {
		t.Fatal(err)
	}
	setOption(t, h, sid, "model", "gamma-3")
	setOption(t, h, sid, "thinking", "off")
	last := setOption(t, h, sid, "mode", "acceptEdits")
	var fork struct {
		SessionID     string          `json:"sessionId"`
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	h.mustCall("session/fork", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, &fork)
	if !bytes.Equal(fork.ConfigOptions, last) {
		t.Errorf("fork answer options\n got %s\nwant %s", fork.ConfigOptions, last)
	}
	setOption(t, h, fork.SessionID, "model", "alpha-1")
	if _, err := h.prompt(fork.SessionID, "in the fork"); err != nil {
		t.Fatal(err)
	}
	if got := str(e.request(t, 2)["model"]); got != "alpha-1" {
		t.Errorf("fork's request model %q", got)
	}
	h.stop()

	h2 := newHarness(t, opts())
	h2.mustCall("initialize", map[string]any{"protocolVersion": 1}, nil)
	var res struct {
		ConfigOptions json.RawMessage `json:"configOptions"`
	}
	h2.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, &res)
	if !bytes.Equal(res.ConfigOptions, last) {
		t.Errorf("resume answer options\n got %s\nwant %s", res.ConfigOptions, last)
	}
	if _, err := h2.prompt(sid, "after resume"); err != nil {
		t.Fatal(err)
	}
	req := e.request(t, 3)
	if str(req["model"]) != "gamma-3" || string(req["thinking"]) != `{"type":"disabled"}` {
		t.Errorf("request after resume: model %s thinking %s", req["model"], req["thinking"])
	}
}
