package toolmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
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

// Result sizes of the in-memory server's big_text and image tools, in
// bytes: under maxModelText's cut for one, under maxMetaBytes (as base64)
// for the other, so that neither is stripped from the log.
const (
	bigTextBytes = 512 << 10
	imageBytes   = 512 << 10
)

// inMemoryServer returns a client transport to an in-process MCP server
// with read-only tools: "echo", answering its text argument, "big_text"
// (bigTextBytes of text) and "image" (a line of text and an image of
// imageBytes).
func inMemoryServer(b *testing.B) mcp.Transport {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mem"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil
		})
	big := strings.Repeat("a line of a large file, as read_file gives it\n", bigTextBytes/46)
	srv.AddTool(&mcp.Tool{Name: "big_text", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, nil
		})
	img := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, imageBytes/4)
	srv.AddTool(&mcp.Tool{Name: "image", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a chart"}, &mcp.ImageContent{Data: img, MIMEType: "image/png"}}}, nil
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
	s := inMemorySession(b)
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
	d := &toolDef{server: "mem", original: "echo"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.output(res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLiveCall is the toolmcp side of one call as the session makes
// it, the server in-process: the call card, the permission check's
// Access, the registry's Execute (the SDK call and the result's
// conversion, model text and Meta) and the final card from the result.
// big_text is one text block of bigTextBytes, image one image of
// imageBytes beside a line of text.
func BenchmarkLiveCall(b *testing.B) {
	for _, name := range []string{"big_text", "image"} {
		b.Run(name, func(b *testing.B) {
			s := inMemorySession(b)
			reg := tools.NewRegistry()
			tool, ok := reg.Lookup(s, "mcp__mem__"+name)
			if !ok {
				b.Fatal("no tool")
			}
			args := json.RawMessage(`{"path":"/tmp/x","n":1}`)
			ex := &tools.Exec{CallID: "c", Name: tool.Name, Args: args, Session: s}
			b.ReportAllocs()
			for b.Loop() {
				if tool.CallView(args) == nil {
					b.Fatal("no call card")
				}
				if _, ok := tool.Access(args); !ok {
					b.Fatal("no access")
				}
				r := reg.Execute(context.Background(), ex)
				if r.IsError {
					b.Fatal(tools.JoinText(r.Content))
				}
				v, ok := tool.ResultView(args, tools.ResultInput{Content: r.Content, Meta: r.Meta}).(tools.GenericResult)
				if !ok || len(v.Content) != len(r.Content) && name == "image" {
					b.Fatalf("result card %+v", v)
				}
			}
		})
	}
}

// sdkResults are results as the SDK gives them to a client (decoded from
// the wire): a large text (bigTextBytes) and an image (imageBytes) with
// a line of text.
func sdkResults(b *testing.B) map[string]*mcp.CallToolResult {
	big := strings.Repeat("a line of a large file, as read_file gives it\n", bigTextBytes/46)
	img := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, imageBytes/4)
	out := map[string]*mcp.CallToolResult{}
	for name, res := range map[string]*mcp.CallToolResult{
		"big_text": {Content: []mcp.Content{&mcp.TextContent{Text: big}}},
		"image":    {Content: []mcp.Content{&mcp.TextContent{Text: "a chart"}, &mcp.ImageContent{Data: img, MIMEType: "image/png"}}},
	} {
		raw, err := json.Marshal(res)
		if err != nil {
			b.Fatal(err)
		}
		var got mcp.CallToolResult
		if err := json.Unmarshal(raw, &got); err != nil {
			b.Fatal(err)
		}
		out[name] = &got
	}
	return out
}

// BenchmarkResult is toolmcp's work on one result the SDK gave: the
// model's content and Meta (output), then the final card
// (presentResult, as the session shows it).
func BenchmarkResult(b *testing.B) {
	for name, res := range sdkResults(b) {
		b.Run(name, func(b *testing.B) {
			d := &toolDef{server: "mem", original: name}
			b.ReportAllocs()
			for b.Loop() {
				out, err := d.output(res)
				if err != nil {
					b.Fatal(err)
				}
				if d.presentResult(nil, tools.ResultInput{Content: out.Content, Meta: bytes.Clone(out.Meta)}) == nil {
					b.Fatal("no card")
				}
			}
		})
	}
}

// BenchmarkArgs is what toolmcp does with one call's arguments: the call
// card, the permission prompt's card and the two Access checks
// (permission, checkpoint).
func BenchmarkArgs(b *testing.B) {
	d := &toolDef{server: "mem", original: "write_note", display: "Write note", required: []string{"name"}}
	args := json.RawMessage(`{"name":"todo","path":"/home/u/notes/todo.md","text":"buy milk\nand bread","tags":["a","b"],"n":3}`)
	b.ReportAllocs()
	for b.Loop() {
		for range 2 {
			d.presentCall(args)
			if _, ok := d.pathAccess(args); !ok {
				b.Fatal("not ok")
			}
		}
	}
}

// inMemorySession is a session whose set holds the in-process server
// "mem" (inMemoryServer), started; it is closed with b.
func inMemorySession(b *testing.B) tools.Session {
	b.Helper()
	mem := inMemoryServer(b)
	s := tools.NewSession("bench", b.TempDir())
	dial := func(Server) mcp.Transport { return mem }
	set := Start([]Server{{Name: "mem", Command: "in-memory"}}, Options{Registry: tools.SessionTools(s), Dial: dial})
	b.Cleanup(set.Close)
	if err := set.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s
}
