// Command mcpserver is the MCP server the toolmcp tests start: built with
// the official Go SDK, served over stdio (the default), streamable HTTP
// (-transport http) or the old HTTP+SSE transport (-transport sse) on
// 127.0.0.1. Over HTTP it prints "URL <endpoint>" as its first stdout
// line. Every tool call it sees is appended to the -events file, one
// line each ("slow cancelled", "crash", ...), so a test can tell what
// reached the server.
//
// Tools: read_note (read-only), write_note (destructive), search.notes
// (read-only, a name to sanitize), slow (waits -ms or until cancelled),
// picture (text, an image, an embedded resource and a resource link),
// fail (isError), structured (structured content only), crash (exits
// mid-call), pid (the process id), spawn (starts a grandchild sleep and
// answers its pid), add_tool / remove_tool (change the list at run
// time: tools/list_changed).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	transport  = flag.String("transport", "stdio", "stdio, http or sse")
	events     = flag.String("events", "", "file to append one line per tool call event to")
	name       = flag.String("name", "notes", "the server's implementation name")
	extra      = flag.String("extra", "", "the name of one more read-only tool, answering its own name")
	exitEarly  = flag.Bool("exit-at-start", false, "exit 3 at once (a server that does not start)")
	hang       = flag.Bool("hang", false, "never answer (a server that times out in initialize)")
	startDelay = flag.Duration("start-delay", 0, "wait this long before serving (a slow server that does start)")
	badTool    = flag.Bool("bad-tool", false, "add a tool whose input schema refers to an outside schema")
	ignoreEOF  = flag.Bool("ignore-eof", false, "over stdio: keep running after stdin closes (only a signal ends it)")
	wantHeader = flag.String("want-header", "", "over HTTP: refuse requests without this Name: value header")
)

var (
	mu    sync.Mutex
	notes = map[string]string{"todo": "buy milk"}
)

func event(format string, args ...any) {
	if *events == "" {
		return
	}
	f, err := os.OpenFile(*events, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, format+"\n", args...)
	f.Close()
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func args(req *mcp.CallToolRequest) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &m)
	return m
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func redDot() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

func yes() *bool { t := true; return &t }

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: *name, Version: "1.0.0"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	nameArg := schema(`{"type":"object","properties":{"name":{"type":"string","description":"the note's name"}},"required":["name"]}`)
	s.AddTool(&mcp.Tool{Name: "read_note", Title: "Read note", Description: "Read a note by name.", InputSchema: nameArg,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := str(args(req), "name")
			mu.Lock()
			body, ok := notes[n]
			mu.Unlock()
			event("read_note %s", n)
			if !ok {
				r := text("no note called " + n)
				r.IsError = true
				return r, nil
			}
			return text(body), nil
		})
	s.AddTool(&mcp.Tool{Name: "write_note", Description: "Replace a note's text.",
		InputSchema: schema(`{"type":"object","properties":{"name":{"type":"string"},"text":{"type":"string"}},"required":["name","text"]}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: yes(), Title: "Write note"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a := args(req)
			mu.Lock()
			notes[str(a, "name")] = str(a, "text")
			mu.Unlock()
			event("write_note %s", str(a, "name"))
			return text(fmt.Sprintf("wrote %d bytes to %s", len(str(a, "text")), str(a, "name"))), nil
		})
	s.AddTool(&mcp.Tool{Name: "search.notes", Description: "Find notes containing a text.",
		InputSchema: schema(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			q := str(args(req), "query")
			event("search %s", q)
			mu.Lock()
			defer mu.Unlock()
			var hits []string
			for k, v := range notes {
				if bytes.Contains([]byte(v), []byte(q)) {
					hits = append(hits, k)
				}
			}
			return text(fmt.Sprint(hits)), nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Wait ms milliseconds.",
		InputSchema: schema(`{"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ms, _ := args(req)["ms"].(float64)
			event("slow start")
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
				event("slow done")
				return text("waited"), nil
			case <-ctx.Done():
				event("slow cancelled")
				return nil, ctx.Err()
			}
		})
	s.AddTool(&mcp.Tool{Name: "picture", Description: "Draw a red dot.", InputSchema: schema(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Picture"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			event("picture")
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a red dot"},
				&mcp.ImageContent{Data: redDot(), MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "note://todo", MIMEType: "text/plain", Text: "buy milk"}},
				&mcp.ResourceLink{URI: "note://all", Name: "all notes"},
			}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Always fails.", InputSchema: schema(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			event("fail")
			r := text("the note store is locked")
			r.IsError = true
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "structured", Description: "Counts.", InputSchema: schema(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"count": 2, "items": []string{"a", "b"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "crash", Description: "Exit mid-call.", InputSchema: schema(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			event("crash")
			fmt.Fprintln(os.Stderr, "mcpserver: crashing on purpose")
			os.Exit(7)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "pid", Description: "The server's process id.", InputSchema: schema(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strconv.Itoa(os.Getpid())), nil
		})
	s.AddTool(&mcp.Tool{Name: "spawn", Description: "Start a grandchild process.", InputSchema: schema(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c := exec.Command("sleep", "300")
			if err := c.Start(); err != nil {
				return nil, err
			}
			go c.Wait()
			return text(strconv.Itoa(c.Process.Pid)), nil
		})
	s.AddTool(&mcp.Tool{Name: "add_tool", Description: "Add a tool.", InputSchema: nameArg},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := str(args(req), "name")
			s.AddTool(&mcp.Tool{Name: n, Description: "added at run time", InputSchema: schema(`{"type":"object"}`),
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return text("I am " + n), nil
				})
			event("add_tool %s", n)
			return text("added " + n), nil
		})
	s.AddTool(&mcp.Tool{Name: "remove_tool", Description: "Remove a tool.", InputSchema: nameArg},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := str(args(req), "name")
			s.RemoveTools(n)
			event("remove_tool %s", n)
			return text("removed " + n), nil
		})
	if *badTool {
		s.AddTool(&mcp.Tool{Name: "bad_schema", Description: "its schema cannot be compiled here",
			InputSchema: schema(`{"type":"object","properties":{"x":{"$ref":"https://example.com/x.json"}}}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("unreachable"), nil
			})
	}
	if *extra != "" {
		n := *extra
		s.AddTool(&mcp.Tool{Name: n, Description: "the extra tool", InputSchema: schema(`{"type":"object"}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("I am " + n), nil
			})
	}
	return s
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *exitEarly {
		fmt.Fprintln(os.Stderr, "mcpserver: refusing to start")
		os.Exit(3)
	}
	if *hang {
		event("hang pid %d", os.Getpid())
		time.Sleep(time.Hour)
		return
	}
	if *startDelay > 0 {
		event("delay pid %d", os.Getpid())
		time.Sleep(*startDelay)
	}
	s := newServer()
	if *transport == "stdio" {
		err := s.Run(context.Background(), &mcp.StdioTransport{})
		if *ignoreEOF {
			time.Sleep(time.Hour)
		}
		if err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	get := func(*http.Request) *mcp.Server { return s }
	var h http.Handler
	switch *transport {
	case "http":
		h = mcp.NewStreamableHTTPHandler(get, nil)
	case "sse":
		h = mcp.NewSSEHandler(get, nil)
	default:
		log.Fatalf("unknown transport %q", *transport)
	}
	if *wantHeader != "" {
		inner := h
		k, v, _ := bytes.Cut([]byte(*wantHeader), []byte(": "))
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(string(k)) != string(v) {
				http.Error(w, "missing "+string(k), http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	fmt.Printf("URL http://%s/mcp\n", ln.Addr()) // stdout-ok: the test server tells its test the URL
	log.Fatal(http.Serve(ln, h))
}
