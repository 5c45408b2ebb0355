package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

var updateWeb = flag.Bool("update-web", false, "record testdata/replay/web-research again, through the binary's --record against local fakes")

// The research turn of testdata/replay/web-research: a search, a fetch
// of its first result, an answer.
var (
	researchPrompt = "What is new in Go 1.26? Search the web and read the release notes."
	researchSearch = `{"query":"Go 1.26 release notes site:go.dev","count":2}`
	researchFetch  = `{"url":"https://go.dev/doc/go1.26"}`
	researchAnswer = "Go 1.26 adds the new and improved things the release notes list."
)

func researchBodies() []string {
	return []string{
		e2etest.ToolCallsAt(0, [2]string{"web_search", researchSearch}),
		e2etest.ToolCallsAt(1, [2]string{"web_fetch", researchFetch}),
		e2etest.Text([]string{"The release notes answer it."}, []string{researchAnswer}, "stop"),
	}
}

// TestWebResearchReplay: the recorded research turn replays offline
// through the binary (--replay answers the model and the web calls, in
// call order): a search card with the results as links, a fetch card
// with the page, the two calls' prices in the last usage_update with
// their counts. With -update-web the folder is first recorded again by a
// real --record run against local fakes of the model and of both APIs.
func TestWebResearchReplay(t *testing.T) {
	dir := filepath.Join(acptest.RepoRoot(t), "testdata", "replay", "web-research")
	if *updateWeb {
		recordResearch(t, dir)
	}
	cmd := exec.Command(binary(t), "--replay", dir, "--mode", "bypassPermissions", "--model", "deepseek-flash")
	cmd.Env = append(os.Environ(), "DSH_STATE_DIR="+t.TempDir(), "DSH_API_KEY=", "DEEPSEEK_API_KEY=", "DSH_BASE_URL=")
	lines := researchTurn(t, cmd)
	v := acptest.Load(t)
	var kinds, links []string
	var page, lastUsage string
	for _, l := range lines {
		if err := v.Validate(l, ""); err != nil {
			t.Errorf("schema: %v\n%s", err, l)
		}
		var m struct {
			Params struct {
				Update struct {
					Kind    string `json:"sessionUpdate"`
					Tool    string `json:"kind"`
					Status  string `json:"status"`
					Content []struct {
						Content struct {
							Type, Text, URI, Title string
						} `json:"content"`
					} `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		_ = json.Unmarshal(l, &m)
		u := m.Params.Update
		switch u.Kind {
		case "tool_call":
			kinds = append(kinds, u.Tool)
		case "tool_call_update":
			if u.Status != "completed" {
				break
			}
			for _, c := range u.Content {
				switch c.Content.Type {
				case "resource_link":
					links = append(links, c.Content.URI+" "+c.Content.Title)
				case "text":
					page += c.Content.Text
				}
			}
		case "usage_update":
			lastUsage = string(l)
		}
	}
	if strings.Join(kinds, ",") != "search,fetch" {
		t.Errorf("tool kinds %v", kinds)
	}
	if strings.Join(links, "\n") != "https://go.dev/doc/go1.26 Go 1.26 Release Notes\nhttps://go.dev/blog/go1.26 Go 1.26 is released" {
		t.Errorf("search links %q", links)
	}
	if !strings.HasPrefix(page, "**Go 1.26 Release Notes - The Go Programming Language**\n<https://go.dev/doc/go1.26>\n\n# Go 1.26 Release Notes") {
		t.Errorf("fetch card %q", page)
	}
	if !strings.Contains(lastUsage, `"_meta":{"billedCalls":{"fetch":1,"search":1},"cacheHitRatio":`) || !strings.Contains(lastUsage, `"currency":"USD"`) {
		t.Errorf("last usage_update %s", lastUsage)
	}
	if !strings.Contains(string(lines[len(lines)-1]), `"stopReason":"end_turn"`) {
		t.Errorf("prompt answered %s", lines[len(lines)-1])
	}
}

// researchTurn runs cmd through initialize, session/new and the research
// prompt and returns every line it wrote.
func researchTurn(t *testing.T, cmd *exec.Cmd) [][]byte {
	t.Helper()
	p := startCmd(t, cmd)
	p.send(t, initLine)
	lines := [][]byte{p.next(t)}
	sid, l := p.newSession(t, 2, t.TempDir(), "[]")
	lines = append(lines, l)
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}}`, sid, researchPrompt))
	lines = append(lines, p.answer(t, 3)...)
	p.stdin.Close()
	if code, _ := p.wait(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	return lines
}

// recordResearch writes dir again: the binary runs the research turn with
// --record against a local model endpoint (answering researchBodies) and
// a local fake of both APIs on the same host (so the key goes to them),
// then the model streams and web calls it recorded are copied to dir with
// the folder's steps.json, input.json and NOTES.md.
func recordResearch(t *testing.T, dir string) {
	bodies := researchBodies()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-record" {
			t.Errorf("%s without the key", r.URL.Path)
		}
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/chat/completions":
			mu.Lock()
			body := bodies[min(n, len(bodies)-1)]
			n++
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, body)
		case "/v1/tools/search":
			if string(b) != `{"query":"Go 1.26 release notes site:go.dev","count":2}` {
				t.Errorf("search body %s", b)
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"results":[{"title":"Go 1.26 Release Notes","url":"https://go.dev/doc/go1.26","summary":"The release notes of Go 1.26: language, tools, runtime and library changes.","snippet":"Go 1.26 Release Notes","rerank_score":2.4},`+
				`{"title":"Go 1.26 is released","url":"https://go.dev/blog/go1.26","summary":"The Go team announces Go 1.26.","snippet":"Go 1.26 is released","rerank_score":1.9}]}`)
		case "/v1/tools/fetch":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"title":"Go 1.26 Release Notes - The Go Programming Language","content":"# Go 1.26 Release Notes\n\n## Introduction to Go 1.26\n\nThe latest Go release, version 1.26, arrives six months after Go 1.25.\n"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	rec := t.TempDir()
	cmd := exec.Command(binary(t), "--base-url", srv.URL, "--record", rec, "--mode", "bypassPermissions", "--model", "deepseek-flash",
		"--web-search-url", srv.URL+"/v1/tools/search", "--web-fetch-url", srv.URL+"/v1/tools/fetch")
	cmd.Env = append(os.Environ(), "DSH_STATE_DIR="+t.TempDir(), "DSH_API_KEY=sk-record")
	researchTurn(t, cmd)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(rec, "*"))
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasSuffix(name, ".request.json") {
			// The requests hold the run's temporary folders; the
			// scenario is the responses.
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "sk-record") {
			t.Fatalf("%s holds the key", name)
		}
		writeFile(t, filepath.Join(dir, name), string(b))
	}
	writeResearchManifests(t, dir)
}

// writeResearchManifests writes steps.json, input.json and NOTES.md of
// the research folder (the shape testdata/replay/README.md describes).
func writeResearchManifests(t *testing.T, dir string) {
	search := e2etest.CallID(0, 0, "web_search", researchSearch)
	fetch := e2etest.CallID(1, 0, "web_fetch", researchFetch)
	steps := map[string]any{"model": e2etest.Model, "requests": []map[string]any{
		{"request": 1, "turn": 1, "step": 1, "finish_reason": "tool_calls", "tool_calls": []map[string]string{{"id": search, "name": "web_search", "arguments": researchSearch}}},
		{"request": 2, "turn": 1, "step": 2, "finish_reason": "tool_calls", "tool_calls": []map[string]string{{"id": fetch, "name": "web_fetch", "arguments": researchFetch}}},
		{"request": 3, "turn": 1, "step": 3, "finish_reason": "stop"},
	}}
	input := map[string]any{"steps": []map[string]string{{"op": "initialize"}, {"op": "newSession"}, {"op": "prompt", "text": researchPrompt}}}
	for name, v := range map[string]any{"steps.json": steps, "input.json": input} {
		b, _ := json.MarshalIndent(v, "", "  ")
		writeFile(t, filepath.Join(dir, name), string(b)+"\n")
	}
	notes := "# web-research\n\n" +
		"Recorded by `cmd/dsh-acp`'s TestWebResearchReplay with -update-web: the binary ran with `--record` against local fakes of the model and of DeepSeek's Search and Fetch APIs (see ../README.md for the stream shape); not a live session.\n\n" +
		"## What it exercises\n\nA research turn: the model searches the web, fetches the first result, answers. `web-001.json` and `web-002.json` are the recorded Search and Fetch API calls, which `--replay` answers in call order.\n\n" +
		"Client steps (input.json): initialize, newSession, prompt.\n\n## Model requests\n\n3 model request(s):\n\n" +
		"- `001` (turn 1 step 1): reasoning 18 chars, tool call `web_search` `" + researchSearch + "`; finish_reason `tool_calls`.\n" +
		"- `002` (turn 1 step 2): reasoning 18 chars, tool call `web_fetch` `" + researchFetch + "`; finish_reason `tool_calls`.\n" +
		"- `003` (turn 1 step 3): reasoning 28 chars, text \"" + researchAnswer + "\"; finish_reason `stop`.\n\n" +
		"## What to check\n\n- A `tool_call` of kind search titled with the query, completed with the two results as resource links.\n" +
		"- A `tool_call` of kind fetch titled with the URL, completed with the page's title, URL and Markdown.\n" +
		"- The last `usage_update` counts one search and one fetch in `_meta.billedCalls`; its cost includes their prices.\n"
	writeFile(t, filepath.Join(dir, "NOTES.md"), notes)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWebFlags: --web-search-url, --web-fetch-url and --web-allow-private
// and their variables (the flag winning); bad values refused naming the
// flag; the web tools' endpoints on DeepSeek's API and elsewhere.
func TestWebFlags(t *testing.T) {
	c, err := parseConfig(nil, envFrom(nil), io.Discard)
	if err != nil || c.WebSearchURL != "" || c.WebFetchURL != "" || c.WebAllowPrivate || !deepSeekWeb(c) {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = parseConfig([]string{"--web-fetch-url", "http://127.0.0.1:9/f", "--web-allow-private", "1"},
		envFrom(map[string]string{"DSH_WEB_SEARCH_URL": "https://s.example/search", "DSH_WEB_FETCH_URL": "https://ignored.example/", "DSH_WEB_ALLOW_PRIVATE": "0",
			"DSH_BASE_URL": "https://llm.example/v1"}), io.Discard)
	if err != nil || c.WebSearchURL != "https://s.example/search" || c.WebFetchURL != "http://127.0.0.1:9/f" || !c.WebAllowPrivate || deepSeekWeb(c) {
		t.Errorf("flags and env: %q %q %v %v", c.WebSearchURL, c.WebFetchURL, c.WebAllowPrivate, err)
	}
	if w := webConfig(c, nil); w.BaseURL != "https://llm.example/v1" || w.DeepSeek || w.SearchURL != c.WebSearchURL || !w.AllowPrivate {
		t.Errorf("web config %+v", w)
	}
	for _, args := range [][]string{{"--web-search-url", "ftp://x"}, {"--web-fetch-url", "not a url"}, {"--web-allow-private", "yes"}} {
		if _, err := parseConfig(args, envFrom(nil), io.Discard); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%q: %v, want an error naming the flag", args, err)
		}
	}
}
