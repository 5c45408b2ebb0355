package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/acptest"
)

// configOption is a select config option as the SDK client received it.
type configOption struct {
	ID           string `json:"id"`
	Category     string `json:"category"`
	CurrentValue string `json:"currentValue"`
	Options      []struct {
		Value string `json:"value"`
	} `json:"options"`
}

func findOption(opts []configOption, id string) (configOption, bool) {
	for _, o := range opts {
		if o.ID == id {
			return o, true
		}
	}
	return configOption{}, false
}

// TestSDKSetConfigOption: the official SDK client sets the model and the
// thinking level with session/set_config_option on the real binary,
// talking to a fake OpenAI-compatible endpoint (its /models list and the
// text-turn recording): the answers carry the new values, the prompt's
// request carries the chosen model and thinking fields, and the
// usage_update (validated by the SDK's schemas like every message) has
// the listed context window and the cost at the --prices file's rates.
func TestSDKSetConfigOption(t *testing.T) {
	env := needNode(t)
	agent := buildAgent(t, env.root)
	sse, err := os.ReadFile(filepath.Join(acptest.Recordings(t), "text-turn", "001.sse"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var requests []map[string]json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/models":
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"deepseek-flash","object":"model"},{"id":"deepseek-v4-pro","object":"model","context_length":1048576}]}`)
		case "/chat/completions":
			var m map[string]json.RawMessage
			b, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(b, &m)
			mu.Lock()
			requests = append(requests, m)
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write(sse)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	dir := t.TempDir()
	steps := `{"steps":[{"op":"initialize"},{"op":"newSession"},
		{"op":"setConfigOption","configId":"model","value":"deepseek-v4-pro"},
		{"op":"setConfigOption","configId":"thinking","value":"max"},
		{"op":"prompt","text":"Answer with one word only: READY. Use no tools."}]}`
	prices := filepath.Join(dir, "prices.json")
	if err := os.WriteFile(filepath.Join(dir, "input.json"), []byte(steps), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prices, []byte(`{"currency":"USD","models":{"deepseek-v4-pro":{"input":1.32,"cachedInput":0.044,"output":3.96}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// No title request (a live endpoint gets one after the first turn):
	// the one chat request is the prompt's.
	args, _ := json.Marshal([]string{"--model", "deepseek-flash", "--thinking", "on", "--prices", prices, "--titles", "off"})
	r, code := runNode(t, env, agent, dir, "INTEROP_BASE_URL="+srv.URL, "INTEROP_API_KEY=sk-interop-0123456789", "INTEROP_AGENT_ARGS="+string(args))
	for _, e := range r.Errors {
		t.Errorf("run error: %s", e)
	}
	if code != 0 || r.ExitCode == nil || *r.ExitCode != 0 {
		t.Fatalf("run.mjs exit %d, agent exit %v; stderr:\n%s", code, deref(r.ExitCode), r.StderrTail)
	}
	if m, ok := findOption(r.NewSessionOptions, "model"); !ok || m.Category != "model" || m.CurrentValue != "deepseek-flash" || len(m.Options) != 2 {
		t.Errorf("session/new model option %+v", r.NewSessionOptions)
	}
	if len(r.ConfigResponses) != 2 {
		t.Fatalf("config responses %+v", r.ConfigResponses)
	}
	if m, _ := findOption(r.ConfigResponses[0].ConfigOptions, "model"); m.CurrentValue != "deepseek-v4-pro" {
		t.Errorf("set_config_option model answered %+v", r.ConfigResponses[0].ConfigOptions)
	}
	last := r.ConfigResponses[1].ConfigOptions
	if m, _ := findOption(last, "model"); m.CurrentValue != "deepseek-v4-pro" {
		t.Errorf("the model after the thinking change %+v", last)
	}
	if th, _ := findOption(last, "thinking"); th.Category != "thought_level" || th.CurrentValue != "max" {
		t.Errorf("thinking option %+v", last)
	}
	if _, ok := findOption(last, "mode"); !ok {
		t.Errorf("no mode option in %+v", last)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 1 {
		t.Fatalf("%d chat requests, want 1", len(requests))
	}
	req := requests[0]
	if string(req["model"]) != `"deepseek-v4-pro"` || string(req["thinking"]) != `{"type":"enabled"}` || string(req["reasoning_effort"]) != `"max"` {
		t.Errorf("request model %s thinking %s reasoning_effort %s", req["model"], req["thinking"], req["reasoning_effort"])
	}
	if r.StopReasons[0] != "end_turn" || len(r.UsageUpdates) != 1 {
		t.Fatalf("stop %q, usage updates %+v", r.StopReasons, r.UsageUpdates)
	}
	u := r.UsageUpdates[0]
	// text-turn/001.sse: prompt 2363 (all cache misses), completion 22.
	want := (2363*1.32 + 22*3.96) / 1e6
	if u.Prompt != 0 || u.Used != 2363+22 || u.Size != 1048576 || u.Cost == nil || u.Cost.Currency != "USD" || math.Abs(u.Cost.Amount-want) > 1e-12 {
		t.Errorf("usage_update %+v (cost %s), want used 2385, size 1048576, cost %v USD", u, fmt.Sprint(u.Cost), want)
	}
}
