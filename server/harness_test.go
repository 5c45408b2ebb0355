package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/bridge"
	"github.com/dsh-acp/dsh-acp/internal/acpclient"
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
	"github.com/dsh-acp/dsh-acp/tools"
)

// harness runs the agent in-process, wired by server.New as the binary
// is, over real pipes, with a recording client and a transcript of both sides.
type harness struct {
	t      *testing.T
	client *acpclient.Client
	tr     *acptest.Transcript
	conn   *acp.Conn
	srv    *server.Server
	in     *io.PipeWriter
	cwd    string

	mu      sync.Mutex
	updates []acp.SessionNotification
}

type harnessOpts struct {
	replay string     // a replay folder
	model  llm.Client // overrides replay
	caps   map[string]any
	info   map[string]string
	mode   string // permission mode; "" means bypassPermissions
	// stateDir and cwd, when set, replace the fresh temporary folders
	// (to start a second process on the same sessions).
	stateDir, cwd string
	// tools are registered after the defaults and the card tools.
	tools []tools.Tool
	// lineBase is Options.LocationLineBase (nil: per client).
	lineBase *int
	// logs, when set, also receives the agent's log lines (info and up).
	logs io.Writer
	// options, when set, adjusts the server's options before New.
	options func(*server.Options)
	// mcpWait is Options.MCPWait.
	mcpWait time.Duration
	// auth replaces Options.Auth (nil: only testExecutable set).
	auth *bridge.Auth
	// images is Options.ImageModels, as --model-images reads it.
	images string
	// titles, commandsDir and compactAt are Options.Titles,
	// Options.CommandsDir and Options.CompactAt.
	titles      bool
	commandsDir string
	compactAt   float64
}

// testExecutable is the agent's path the login method names in the
// goldens (the test binary's own path would change with every build).
const testExecutable = "/usr/local/bin/dsh-acp"

// testVersion is the agent version the harness serves; goldens show it
// as {{version}}.
const testVersion = "0.1.0-test"

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	mode := o.mode
	if mode == "" {
		mode = "bypassPermissions"
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if o.logs != nil {
		log = slog.New(slog.NewTextHandler(io.MultiWriter(testWriter{t}, o.logs), &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	client := o.model
	switch {
	case client != nil:
	case o.replay != "":
		client = llm.NewReplay(o.replay)
	default:
		// No key: a prompt fails with auth required before any request.
		client = llm.HTTP{}
	}
	stateDir := o.stateDir
	if stateDir == "" {
		stateDir = t.TempDir()
	}
	auth := bridge.Auth{Command: testExecutable}
	if o.auth != nil {
		auth = *o.auth
	}
	images, err := llm.ParseImageModels(o.images)
	if err != nil {
		t.Fatal(err)
	}
	opts := server.Options{Client: client, Model: "deepseek-chat", MaxSteps: 8, Mode: mode,
		StateDir: stateDir, LocationLineBase: o.lineBase, Log: log, Version: testVersion, Tools: append(cardTools(), o.tools...), MCPWait: o.mcpWait,
		Auth: auth, ImageModels: images, Titles: o.titles, CommandsDir: o.commandsDir, CompactAt: o.compactAt}
	if o.options != nil {
		o.options(&opts)
	}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	h := &harness{t: t, tr: acptest.NewTranscript(), cwd: o.cwd, srv: srv}
	if h.cwd == "" {
		h.cwd = t.TempDir()
	}
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	h.in = toAgentW
	h.conn = srv.Serve(toAgentR, h.tr.AgentWriter(fromAgentW))
	h.client = acpclient.New(h.tr.ClientWriter(toAgentW))
	h.client.OnMessage = func(m acpclient.Message) {
		if m.Method == "session/update" {
			var n acp.SessionNotification
			if err := json.Unmarshal(m.Params, &n); err != nil {
				t.Errorf("bad session/update: %v", err)
			}
			h.mu.Lock()
			h.updates = append(h.updates, n)
			h.mu.Unlock()
		}
	}
	h.client.Start(fromAgentR)
	t.Cleanup(func() {
		toAgentW.Close()
		select {
		case <-h.conn.Done():
		case <-time.After(30 * time.Second):
			t.Error("the connection did not end after stdin EOF")
		}
		fromAgentW.Close()
		if !t.Failed() {
			acptest.Load(t).ValidateTranscript(t, h.tr)
		}
	})
	return h
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// waitAgentLine waits until one of the agent's lines after its first
// from holds s (the transcript grows meanwhile: the lines are read anew
// each time).
func (h *harness) waitAgentLine(from int, s string) {
	h.t.Helper()
	waitFor(h.t, func() bool {
		lines := h.tr.AgentLines()
		for _, l := range lines[min(from, len(lines)):] {
			if bytes.Contains(l, []byte(s)) {
				return true
			}
		}
		return false
	})
}

func (h *harness) call(method string, params, result any) error {
	// Only ends a call that would hang: a loaded machine under -race can
	// take seconds for a turn that runs commands.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return h.client.Call(ctx, method, params, result)
}

func (h *harness) mustCall(method string, params, result any) {
	h.t.Helper()
	if err := h.call(method, params, result); err != nil {
		h.t.Fatalf("%s: %v", method, err)
	}
}

// start initializes and opens a session in h.cwd; it returns the id.
func (h *harness) start(o harnessOpts) string {
	h.t.Helper()
	init := map[string]any{"protocolVersion": 1}
	if o.caps != nil {
		init["clientCapabilities"] = o.caps
	}
	if o.info != nil {
		init["clientInfo"] = o.info
	}
	h.mustCall("initialize", init, nil)
	from := len(agentMsgs(h.t, h, 0))
	var ns acp.NewSessionResponse
	h.mustCall("session/new", map[string]any{"cwd": h.cwd, "mcpServers": []any{}}, &ns)
	// The slash commands follow the answer; waiting for them keeps the
	// transcripts in one order.
	h.answerThenCommands(from, ns.SessionID, "session/new")
	return ns.SessionID
}

func (h *harness) prompt(sid, text string) (acp.StopReason, error) {
	var pr acp.PromptResponse
	err := h.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock(text)}}, &pr)
	return pr.StopReason, err
}

// promptAll sends each of prompts in turn and fails the test unless
// each answers end_turn.
func (h *harness) promptAll(sid string, prompts ...string) {
	h.t.Helper()
	for _, p := range prompts {
		if stop, err := h.prompt(sid, p); err != nil || stop != acp.StopEndTurn {
			h.t.Fatalf("prompt %q = %q, %v", p, stop, err)
		}
	}
}

func (h *harness) sessionUpdates() []acp.Update {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]acp.Update, 0, len(h.updates))
	for _, n := range h.updates {
		out = append(out, n.Update)
	}
	return out
}

// joined concatenates the text of chunks of one kind.
func joined(us []acp.Update, kind string) string {
	var b strings.Builder
	for _, u := range us {
		if u.SessionUpdateKind() != kind {
			continue
		}
		switch c := u.(type) {
		case acp.AgentMessageChunk:
			b.WriteString(c.Content.Text)
		case acp.AgentThoughtChunk:
			b.WriteString(c.Content.Text)
		case acp.UserMessageChunk:
			b.WriteString(c.Content.Text)
		default:
			// Not a message chunk: no text to join (kind filtered
			// above anyway).
		}
	}
	return b.String()
}

// fakeModel is an OpenAI-compatible endpoint on 127.0.0.1 whose answers
// come from handle, one call per request (n counts from 1).
type fakeModel struct {
	srv *httptest.Server
	mu  sync.Mutex
	n   int
}

func newFakeModel(t *testing.T, handle func(n int, w http.ResponseWriter, r *http.Request)) *fakeModel {
	f := &fakeModel{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.n++
		n := f.n
		f.mu.Unlock()
		handle(n, w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeModel) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// client returns the live HTTP client pointed at the fake, with fast
// retries.
func (f *fakeModel) client(key string) llm.Client {
	return llm.HTTP{BaseURL: f.srv.URL, APIKey: key, Backoff: func(int) time.Duration { return 5 * time.Millisecond }}
}

// capturing is a model client that keeps every request it is sent and
// answers it with inner (a replay, for recordings).
type capturing struct {
	inner llm.Client
	mu    sync.Mutex
	reqs  []llm.Request
}

func (c *capturing) Stream(ctx context.Context, req llm.Request, on func(llm.Delta)) (*llm.Response, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	c.mu.Unlock()
	return c.inner.Stream(ctx, req, on)
}

// requests returns the requests sent so far.
func (c *capturing) requests() []llm.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]llm.Request(nil), c.reqs...)
}

// cancelPrompt sends session/cancel for sid and waits for the running
// prompt's response on ch: it must answer stopReason "cancelled" within
// limit. It returns how long the answer took.
func (h *harness) cancelPrompt(sid string, ch <-chan acpclient.Message, limit time.Duration) time.Duration {
	h.t.Helper()
	start := time.Now()
	_ = h.client.Notify("session/cancel", map[string]any{"sessionId": sid})
	var m acpclient.Message
	select {
	case m = <-ch:
	case <-time.After(max(limit, 30*time.Second)):
		h.t.Fatalf("the prompt did not answer within %v of the cancel", max(limit, 30*time.Second))
	}
	took := time.Since(start)
	if took > limit {
		h.t.Errorf("the prompt answered %v after the cancel, want within %v", took, limit)
	}
	var pr acp.PromptResponse
	if m.Error != nil || json.Unmarshal(m.Result, &pr) != nil || pr.StopReason != acp.StopCancelled {
		h.t.Fatalf("cancelled prompt answered %s / %v", m.Result, m.Error)
	}
	return took
}

// toolCard is the tool call fields of u, a tool_call (as the update it
// amounts to) or a tool_call_update; ok is false for other kinds.
func toolCard(u acp.Update) (c acp.ToolCallUpdate, ok bool) {
	switch x := u.(type) {
	case acp.ToolCallUpdate:
		return x, true
	case acp.ToolCall:
		title := x.Title
		return acp.ToolCallUpdate{ToolCallID: x.ToolCallID, Title: &title, Kind: x.Kind, Status: x.Status, Locations: x.Locations,
			RawInput: x.RawInput, RawOutput: x.RawOutput, Meta: x.Meta, Content: x.Content}, true
	default:
		// Not a card.
		return acp.ToolCallUpdate{}, false
	}
}
