package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/acptest"
)

// mcpScenario is the repository's scenario in which the model calls a
// tool of a real third-party MCP server: @modelcontextprotocol/
// server-filesystem, pinned in package.json and installed by npm ci.
const mcpScenario = "mcp-filesystem"

// fakeEndpoint is an OpenAI-compatible endpoint on 127.0.0.1 that answers
// the Nth chat completions request with the scenario's NNN.sse and keeps
// those requests' bodies; GET /models (which the agent asks once, at
// initialize) lists the scenario's one model and is not counted.
type fakeEndpoint struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newFakeEndpoint(t *testing.T, dir string) *fakeEndpoint {
	f := &fakeEndpoint{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/models":
			_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"deepseek-chat","object":"model","owned_by":"deepseek"}]}`)
			return
		case "/chat/completions":
		default:
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		n := len(f.bodies)
		f.mu.Unlock()
		sse, err := os.ReadFile(filepath.Join(dir, sseName(n)))
		if err != nil {
			http.Error(w, fmt.Sprintf("request %d: %v", n, err), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(sse)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEndpoint) requests() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.bodies...)
}

// chatRequest is what the checks read of a chat completions request.
type chatRequest struct {
	Messages []map[string]any `json:"messages"`
	Tools    []struct {
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// TestSDKClientMCPServer: the official ACP SDK client opens a session
// with a real MCP server from npm (server-filesystem, stdio, started by
// the agent from session/new's mcpServers) and runs a prompt turn whose
// recorded model response calls its read_text_file tool. The model is
// offered the server's tool with the server's schema, the tool's result
// (the file, as the server read it) reaches the next model request
// exactly as 002.request.json says, and the card is the MCP card: the
// server's title and the path, kind read (the server says readOnlyHint),
// completed without a permission prompt, the file text as content and
// the server's CallToolResult as rawOutput.
func TestSDKClientMCPServer(t *testing.T) {
	env := needNode(t)
	dir := filepath.Join(acptest.Recordings(t), mcpScenario)
	serverJS := filepath.Join(env.dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(serverJS); err != nil {
		t.Fatalf("the MCP server package is not installed (%v); run (cd interop && npm ci)", err)
	}
	agent := buildAgent(t, env.root)
	model := newFakeEndpoint(t, dir)
	// node starting the server takes well over the default 2 s
	// session/new waits when the machine is busy; this test is about the
	// call, not the bound (server's TestMCPSlowServerBound is), so the
	// agent waits for the server. No title request (a live endpoint gets
	// one after the first turn): the two chat requests are the turn's.
	r, code := runNode(t, env, agent, dir, "INTEROP_BASE_URL="+model.srv.URL, "INTEROP_API_KEY=interop-test-key",
		`INTEROP_AGENT_ARGS=["--mcp-wait","60s","--titles","off"]`)
	checkCleanRun(t, r, code)
	checkTwoStepTurn(t, dir, r)

	call, args := recordedCall(t, dir)
	path, _ := args["path"].(string)
	file, err := os.ReadFile(filepath.Join(dir, "workspace", path))
	if call.Name != "mcp__filesystem__read_text_file" || err != nil {
		t.Fatalf("recorded call %+v (%v): want read_text_file of a workspace file", call, err)
	}

	reqs := model.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var first, second chatRequest
	if json.Unmarshal(reqs[0], &first) != nil || json.Unmarshal(reqs[1], &second) != nil {
		t.Fatalf("requests are not JSON:\n%s\n%s", reqs[0], reqs[1])
	}
	offered := false
	for _, tool := range first.Tools {
		if tool.Function.Name == call.Name {
			props, _ := tool.Function.Parameters["properties"].(map[string]any)
			offered = props["path"] != nil && props["head"] != nil
		}
	}
	if !offered {
		t.Errorf("the first request does not offer %s with the server's schema: %s", call.Name, reqs[0])
	}
	var want chatRequest
	b, err := os.ReadFile(filepath.Join(dir, "002.request.json"))
	if err != nil || json.Unmarshal(b, &want) != nil {
		t.Fatalf("002.request.json: %v", err)
	}
	var got []map[string]any
	for _, m := range second.Messages {
		if m["role"] != "system" {
			got = append(got, m)
		}
	}
	if !reflect.DeepEqual(got, want.Messages) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("the second request's messages differ from 002.request.json:\n%s", g)
	}
	if tm := got[len(got)-1]; tm["role"] != "tool" || !strings.HasPrefix(fmt.Sprint(tm["content"]), string(file)) {
		t.Errorf("the tool result the model got: %v", tm)
	}

	if len(r.ToolCalls) != 1 {
		t.Fatalf("%d tool calls, want 1: %v", len(r.ToolCalls), r.ToolCalls)
	}
	c := r.ToolCalls[0]
	for key, want := range map[string]any{"toolCallId": call.ID, "title": "Read Text File: " + path, "kind": "read", "status": "completed"} {
		if c[key] != want {
			t.Errorf("tool call %s = %v, want %v", key, c[key], want)
		}
	}
	if !reflect.DeepEqual(c["rawInput"], args) {
		t.Errorf("rawInput = %v, want %v", c["rawInput"], args)
	}
	items, _ := c["content"].([]any)
	if len(items) == 0 || !reflect.DeepEqual(items[0], map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": string(file)}}) {
		t.Errorf("content = %v, want the file's text first", c["content"])
	}
	raw, _ := c["rawOutput"].(map[string]any)
	blocks, _ := raw["content"].([]any)
	structured, _ := raw["structuredContent"].(map[string]any)
	if len(blocks) != 1 || structured["content"] != string(file) {
		t.Errorf("rawOutput = %v, want the server's CallToolResult", c["rawOutput"])
	}
	if len(r.PermissionRequests) != 0 {
		t.Errorf("permission requests %v for a read-only MCP tool", r.PermissionRequests)
	}
}
