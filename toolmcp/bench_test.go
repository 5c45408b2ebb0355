package toolmcp

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-acp/dsh-acp/tools"
)

// BenchmarkCallDirect is one tools/call of the test server's pid tool
// (stdio) straight through the SDK: the floor for BenchmarkCallChain.
func BenchmarkCallDirect(b *testing.B) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(serverBin)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "pid", Arguments: map[string]any{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallChain is the same call as the model makes it: the shared
// registry's Execute (a pass-through middleware standing for the
// permission step, schema validation, the session lookup), toolmcp's
// call and the result's conversion (model text, Meta).
func BenchmarkCallChain(b *testing.B) {
	s := tools.NewSession("bench", b.TempDir())
	set := Start([]Server{{Name: "notes", Command: serverBin}}, Options{Registry: tools.SessionTools(s)})
	defer set.Close()
	if err := set.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	reg := tools.NewRegistry()
	reg.Use(func(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result {
		if _, ok := reg.Lookup(ex.Session, ex.Name); !ok {
			b.Fatal("no tool")
		}
		return next(ctx, ex)
	})
	ex := &tools.Exec{CallID: "c", Name: "mcp__notes__pid", Args: []byte(`{}`), Session: s}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if r := reg.Execute(context.Background(), ex); r.IsError {
			b.Fatal(tools.JoinText(r.Content))
		}
	}
}

// BenchmarkStartToToolsListed is the time from Start to the tools of one
// stdio server being registered (process start, initialize,
// tools/list), reported as ms/start; Close is not timed.
func BenchmarkStartToToolsListed(b *testing.B) {
	var total time.Duration
	for b.Loop() {
		s := tools.NewSession("bench", b.TempDir())
		began := time.Now()
		set := Start([]Server{{Name: "notes", Command: serverBin}}, Options{Registry: tools.SessionTools(s)})
		if err := set.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		total += time.Since(began)
		if st := set.Status()[0]; st.State != StateReady {
			b.Fatalf("status %+v", st)
		}
		b.StopTimer()
		set.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/start")
}

// BenchmarkStartReturns is what Start itself costs its caller (the
// session/new path): it returns before any server is up.
func BenchmarkStartReturns(b *testing.B) {
	for b.Loop() {
		s := tools.NewSession("bench", b.TempDir())
		set := Start([]Server{{Name: "notes", Command: serverBin}}, Options{Registry: tools.SessionTools(s)})
		b.StopTimer()
		set.Close()
		b.StartTimer()
	}
}

// inMemoryServer returns a client transport to an in-process MCP server
// with one read-only tool, "echo", answering its text argument.
func inMemoryServer(b *testing.B) mcp.Transport {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mem"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil
		})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ss.Close() })
	return ct
}

// BenchmarkInMemoryDirect and BenchmarkInMemoryChain: the same call with
// the server in-process (no pipes, no other process), so the difference
// is the chain's own cost: middleware, schema validation, session
// lookup, result conversion and Meta.
func BenchmarkInMemoryDirect(b *testing.B) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := c.Connect(context.Background(), inMemoryServer(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInMemoryChain(b *testing.B) {
	mem := inMemoryServer(b)
	s := tools.NewSession("bench", b.TempDir())
	dial := func(Server) mcp.Transport { return mem }
	set := Start([]Server{{Name: "mem", Command: "in-memory"}}, Options{Registry: tools.SessionTools(s), Dial: dial})
	defer set.Close()
	if err := set.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	reg := tools.NewRegistry()
	reg.Use(func(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result {
		if _, ok := reg.Lookup(ex.Session, ex.Name); !ok {
			b.Fatal("no tool")
		}
		return next(ctx, ex)
	})
	ex := &tools.Exec{CallID: "c", Name: "mcp__mem__echo", Args: []byte(`{"text":"hello"}`), Session: s}
	b.ReportAllocs()
	for b.Loop() {
		if r := reg.Execute(context.Background(), ex); r.IsError || tools.JoinText(r.Content) != "hello" {
			b.Fatal(tools.JoinText(r.Content))
		}
	}
}

// BenchmarkOutput is the result conversion alone (model text and Meta)
// for a one-line text result.
func BenchmarkOutput(b *testing.B) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := output("mem", "echo", res); err != nil {
			b.Fatal(err)
		}
	}
}
