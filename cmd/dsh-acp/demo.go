package main

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acpclient"
)

//go:embed demo
var demoFiles embed.FS

// demoPrompt is what the demo asks the recorded model.
const demoPrompt = "Switch config.txt to release mode and check it."

// runDemo copies the sample workspace into a fresh temporary directory,
// starts the agent on the embedded recording and drives one prompt turn
// as an ACP client over a real pipe, printing one line per update.
func runDemo(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: dsh-acp demo")
		return 2
	}
	tmp, err := os.MkdirTemp("", "dsh-acp-demo-")
	if err != nil {
		fmt.Fprintln(stderr, "dsh-acp demo:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	work, rec := filepath.Join(tmp, "workspace"), filepath.Join(tmp, "recording")
	if err := copyEmbedded("demo/workspace", work); err != nil {
		fmt.Fprintln(stderr, "dsh-acp demo:", err)
		return 1
	}
	if err := copyEmbedded("demo/recording", rec); err != nil {
		fmt.Fprintln(stderr, "dsh-acp demo:", err)
		return 1
	}
	cfg := config{Model: "deepseek-flash", MaxSteps: 16, Mode: "default", Replay: rec,
		StateDir: filepath.Join(tmp, "state"), LocationLineBase: -1}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := newServer(cfg, log)
	if err != nil {
		fmt.Fprintln(stderr, "dsh-acp demo:", err)
		return 1
	}
	defer srv.Close()

	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	conn := srv.Serve(toAgentR, fromAgentW)
	client := acpclient.New(toAgentW)
	p := &demoPrinter{w: stdout, cwd: work}
	client.OnMessage = p.message
	client.OnRequest = func(method string, params json.RawMessage) (any, error) {
		if method == acp.MethodSessionRequestPermission {
			var req acp.RequestPermissionRequest
			_ = json.Unmarshal(params, &req)
			title := ""
			if req.ToolCall.Title != nil {
				title = *req.ToolCall.Title
			}
			fmt.Fprintf(stdout, "%-19s %s %q -> allow-once\n", "request_permission", req.ToolCall.ToolCallID, title)
			return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeSelected, OptionID: "allow-once"}}, nil
		}
		return nil, &acp.Error{Code: acp.CodeMethodNotFound, Message: "the demo client does not serve " + method}
	}
	client.Start(fromAgentR)
	code := demoTurn(client, work, stdout, stderr)
	toAgentW.Close()
	select {
	case <-conn.Done():
	case <-time.After(2 * time.Second):
	}
	fromAgentW.Close()
	return code
}

func demoTurn(c *acpclient.Client, cwd string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var init acp.InitializeResponse
	if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]string{"name": "dsh-acp-demo", "version": version},
		"clientCapabilities": map[string]any{"_meta": map[string]any{"terminal_output": true}}}, &init); err != nil {
		fmt.Fprintln(stderr, "dsh-acp demo: initialize:", err)
		return 1
	}
	fmt.Fprintf(stdout, "agent       %s %s, protocol %d\n", init.AgentInfo.Name, init.AgentInfo.Version, init.ProtocolVersion)
	var ns acp.NewSessionResponse
	if err := c.Call(ctx, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &ns); err != nil {
		fmt.Fprintln(stderr, "dsh-acp demo: session/new:", err)
		return 1
	}
	fmt.Fprintf(stdout, "prompt      %q\n", demoPrompt)
	var pr acp.PromptResponse
	err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []acp.ContentBlock{acp.TextBlock(demoPrompt)}}, &pr)
	if err != nil {
		fmt.Fprintln(stderr, "dsh-acp demo: the prompt failed:", err)
		return 1
	}
	fmt.Fprintf(stdout, "stop        %s\n", pr.StopReason)
	if pr.StopReason != acp.StopEndTurn {
		return 1
	}
	return 0
}

// demoPrinter prints one line per session/update: the kind first, then
// the salient fields.
type demoPrinter struct {
	w   io.Writer
	cwd string
}

func (p *demoPrinter) message(m acpclient.Message) {
	if m.Method != "session/update" {
		return
	}
	var n acp.SessionNotification
	if err := json.Unmarshal(m.Params, &n); err != nil {
		fmt.Fprintf(p.w, "invalid     %v\n", err)
		return
	}
	var parts []string
	switch u := n.Update.(type) {
	case acp.AgentMessageChunk:
		parts = append(parts, fmt.Sprintf("%q", u.Content.Text))
	case acp.AgentThoughtChunk:
		parts = append(parts, fmt.Sprintf("%q", u.Content.Text))
	case acp.UserMessageChunk:
		parts = append(parts, fmt.Sprintf("%q", u.Content.Text))
	case acp.ToolCall:
		parts = p.toolCard(u.ToolCallID, &u.Title, u.Kind, u.Status, u.Content, u.Meta)
	case acp.ToolCallUpdate:
		parts = p.toolCard(u.ToolCallID, u.Title, u.Kind, u.Status, u.Content, u.Meta)
	case acp.Plan:
		for _, e := range u.Entries {
			parts = append(parts, fmt.Sprintf("[%s] %s", e.Status, e.Content))
		}
	case acp.SessionInfoUpdate:
		if u.Title != nil {
			parts = append(parts, fmt.Sprintf("title=%q", *u.Title))
		}
	case acp.CurrentModeUpdate:
		parts = append(parts, u.CurrentModeID)
	case acp.UsageUpdate:
		parts = append(parts, fmt.Sprintf("used=%d size=%d", u.Used, u.Size))
		if u.Cost != nil {
			parts = append(parts, fmt.Sprintf("cost=%g %s", u.Cost.Amount, u.Cost.Currency))
		}
	case acp.AvailableCommandsUpdate:
		for _, c := range u.AvailableCommands {
			parts = append(parts, "/"+c.Name)
		}
	default:
		// Other kinds (config options, notices, compaction) print their
		// kind alone, which is enough to see that they came.
	}
	fmt.Fprintf(p.w, "%-19s %s\n", n.Update.SessionUpdateKind(), strings.Join(parts, " "))
}

// toolCard is the salient fields of a tool call or its update.
func (p *demoPrinter) toolCard(id string, title *string, kind acp.ToolKind, status acp.ToolCallStatus, content []acp.ToolCallContent, meta *acp.ToolCallMeta) []string {
	parts := []string{id}
	if title != nil {
		parts = append(parts, fmt.Sprintf("title=%q", *title))
	}
	if kind != "" {
		parts = append(parts, "kind="+string(kind))
	}
	if status != "" {
		parts = append(parts, "status="+string(status))
	}
	for _, c := range content {
		switch c := c.(type) {
		case acp.Diff:
			old := "null"
			if c.OldText != nil {
				old = fmt.Sprintf("%q", *c.OldText)
			}
			parts = append(parts, fmt.Sprintf("diff %s: %s -> %q", strings.TrimPrefix(c.Path, p.cwd+"/"), old, c.NewText))
		case acp.Terminal:
			parts = append(parts, "terminal="+c.TerminalID)
		case acp.Content:
			parts = append(parts, fmt.Sprintf("text=%q", c.Content.Text))
		}
	}
	if meta != nil {
		if meta.TerminalOutput != nil && meta.TerminalOutput.Data != "" {
			parts = append(parts, fmt.Sprintf("output=%q", meta.TerminalOutput.Data))
		}
		if meta.TerminalExit != nil {
			if meta.TerminalExit.ExitCode != nil {
				parts = append(parts, fmt.Sprintf("exit=%d", *meta.TerminalExit.ExitCode))
			}
			if meta.TerminalExit.Signal != nil {
				parts = append(parts, "signal="+*meta.TerminalExit.Signal)
			}
		}
	}
	return parts
}

// copyEmbedded copies the embedded directory dir to dst.
func copyEmbedded(dir, dst string) error {
	return fs.WalkDir(demoFiles, dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := demoFiles.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
