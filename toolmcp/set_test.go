package toolmcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image/png"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// wantNotes are the function names of the test server's tools.
var wantNotes = []string{
	"mcp__notes__add_tool", "mcp__notes__crash", "mcp__notes__fail", "mcp__notes__picture", "mcp__notes__pid",
	"mcp__notes__read_note", "mcp__notes__remove_tool", "mcp__notes__search_notes", "mcp__notes__slow",
	"mcp__notes__spawn", "mcp__notes__structured", "mcp__notes__write_note",
}

// TestStdioServer: the server's tools are registered for the session
// with their schemas and classes, run through the shared chain (the
// registry validates arguments first), and their cards say what the
// annotations say.
func TestStdioServer(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	f := start(t, Options{}, stdioServer("notes", events))
	st := f.set.Status()
	if len(st) != 1 || st[0].State != StateReady || !slices.Equal(st[0].Tools, wantNotes) {
		t.Fatalf("status = %+v", st)
	}
	if got := f.names(); !slices.Equal(got, wantNotes) {
		t.Errorf("the model is offered %v", got)
	}
	if n := f.noticeList(); len(n) != 0 {
		t.Errorf("notices: %q", n)
	}
	checkNotesServer(t, f, events)

	// The server is not trusted: its readOnlyHint is a claim.
	read, _ := f.shared.Lookup(f.session, "mcp__notes__read_note")
	if read.Class != tools.ClassReadOnlyClaimed || !read.ConcurrencySafe || read.Description != "Read a note by name." {
		t.Errorf("read_note: class %v, concurrency-safe %v, %q", read.Class, read.ConcurrencySafe, read.Description)
	}
	var schema map[string]any
	if err := json.Unmarshal(read.Parameters, &schema); err != nil || schema["required"].([]any)[0] != "name" {
		t.Errorf("read_note parameters = %s", read.Parameters)
	}
	write, _ := f.shared.Lookup(f.session, "mcp__notes__write_note")
	if write.Class != tools.ClassUndeclared || write.ConcurrencySafe {
		t.Errorf("write_note: class %v, concurrency-safe %v", write.Class, write.ConcurrencySafe)
	}

	// The arguments are validated before the server sees them.
	r := f.call(context.Background(), "mcp__notes__read_note", `{"nom":"todo"}`)
	if !r.IsError || r.Error == nil || r.Error.Code != tools.CodeInvalidArgs {
		t.Errorf("invalid arguments: %+v", r)
	}
	r = f.call(context.Background(), "mcp__notes__read_note", `{"name":"todo","name":"x"}`)
	if !r.IsError || r.Error == nil || r.Error.Code != tools.CodeInvalidArgs || tools.JoinText(r.Content) != `Error: invalid arguments: duplicate key "name" in arguments` {
		t.Errorf("a name given twice: %+v", r)
	}
	for _, ev := range readEvents(events) {
		if strings.HasPrefix(ev, "read_note") && ev != "read_note todo" {
			t.Errorf("the server saw a call with invalid arguments: %q", ev)
		}
	}

	// A JSON-RPC error from the server (here: a tool it does not have).
	if _, err := f.set.servers[0].call(context.Background(), &toolDef{server: "notes", original: "no_such_tool"}, nil); err == nil ||
		!strings.Contains(err.Error(), `MCP server "notes": no_such_tool: `) || err.(*tools.Error).Code != CodeProtocol {
		t.Errorf("unknown tool on the server: %v", err)
	}

	// Cards.
	cv := write.CallView(json.RawMessage(`{"name":"todo","text":"x"}`)).(tools.GenericCall)
	if cv.Title != "Write note: todo (destructive)" || cv.Kind != tools.KindOther || len(cv.Content) != 1 ||
		!strings.Contains(cv.Content[0].Text, "Destructive") || !strings.Contains(cv.Content[0].Text, `"notes"`) ||
		string(cv.RawInput) != `{"name":"todo","text":"x"}` {
		t.Errorf("write_note card = %+v", cv)
	}
	if dv := read.CallView(json.RawMessage(`{"name":"todo","name":"other"}`)).(tools.GenericCall); dv.Title != "Read note" {
		t.Errorf("read_note card of a name given twice = %+v, want no name in the title", dv)
	}
	rv := read.CallView(json.RawMessage(`{"name":"todo"}`)).(tools.GenericCall)
	if rv.Title != "Read note: todo" || rv.Kind != tools.KindRead || len(rv.Content) != 0 {
		t.Errorf("read_note card = %+v", rv)
	}
	search, _ := f.shared.Lookup(f.session, "mcp__notes__search_notes")
	if sv := search.CallView(json.RawMessage(`{"query":"milk"}`)).(tools.GenericCall); sv.Title != "search.notes: milk" || sv.Kind != tools.KindSearch {
		t.Errorf("search card = %+v", sv)
	}
	fail, _ := f.shared.Lookup(f.session, "mcp__notes__fail")
	if fv := fail.CallView(json.RawMessage(`{}`)).(tools.GenericCall); fv.Title != "fail" || !strings.Contains(fv.Content[0].Text, "May be destructive") {
		t.Errorf("an unannotated tool's card = %+v", fv)
	}
	pid, _ := f.shared.Lookup(f.session, "mcp__notes__pid")
	if pv := pid.CallView(nil).(tools.GenericCall); pv.Kind != tools.KindOther {
		t.Errorf("a read-only tool whose name says nothing: kind %q", pv.Kind)
	}
}

// checkNotesServer runs the calls every transport must get right.
func checkNotesServer(t *testing.T, f *fixture, events string) {
	t.Helper()
	if got := f.text("mcp__notes__read_note", `{"name":"todo"}`); got != "buy milk" {
		t.Errorf("read_note = %q", got)
	}
	if got := f.text("mcp__notes__write_note", `{"name":"todo","text":"buy oat milk"}`); got != "wrote 12 bytes to todo" {
		t.Errorf("write_note = %q", got)
	}
	if got := f.text("mcp__notes__read_note", `{"name":"todo"}`); got != "buy oat milk" {
		t.Errorf("read_note after write = %q", got)
	}

	// picture: text, an image, an embedded resource, a resource link.
	// The image is given to the model as an image (after the text).
	r := f.call(context.Background(), "mcp__notes__picture", ``)
	var imgs []tools.Content
	for _, c := range r.Content {
		if c.Type == tools.ContentImage {
			imgs = append(imgs, c)
		}
	}
	if got := tools.JoinText(r.Content); r.IsError || got != "a red dot\n[resource note://todo (text/plain)]\nbuy milk\n[resource link: all notes <note://all>]" ||
		len(imgs) != 1 || imgs[0].MimeType != tools.MimePNG || imgs[0].Data == "" || r.Content[len(r.Content)-1].Type != tools.ContentImage {
		t.Errorf("picture, as the model sees it: %q, images %d", got, len(imgs))
	}
	picture, _ := f.shared.Lookup(f.session, "mcp__notes__picture")
	view, ok := picture.ResultView(nil, tools.ResultInput{Content: r.Content, Meta: r.Meta}).(tools.GenericResult)
	if !ok || len(view.Content) != 4 {
		t.Fatalf("picture card = %#v", view)
	}
	c := view.Content
	if c[0] != tools.Text("a red dot") || c[1].Type != tools.ContentImage || c[1].MimeType != "image/png" ||
		c[2] != (tools.Content{Type: tools.ContentResource, URI: "note://todo", MimeType: "text/plain", Text: "buy milk"}) ||
		c[3] != (tools.Content{Type: tools.ContentResourceLink, URI: "note://all", Name: "all notes"}) {
		t.Errorf("picture card content = %+v", c)
	}
	img, err := base64.StdEncoding.DecodeString(c[1].Data)
	if err == nil {
		_, err = png.Decode(bytes.NewReader(img))
	}
	if err != nil {
		t.Errorf("the card's image is not the PNG: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(view.RawOutput, &raw); err != nil || len(raw["content"].([]any)) != 4 {
		t.Errorf("rawOutput = %s", view.RawOutput)
	}

	// isError: a failed result with the server's message.
	r = f.call(context.Background(), "mcp__notes__fail", `{}`)
	if !r.IsError || tools.JoinText(r.Content) != "Error: the note store is locked" || r.Error == nil || r.Error.Code != CodeToolError {
		t.Errorf("fail = %+v", r)
	}
	// Structured content only: the model and the card get its JSON.
	r = f.call(context.Background(), "mcp__notes__structured", `{}`)
	if got := tools.JoinText(r.Content); r.IsError || !strings.Contains(got, `"count": 2`) || !strings.Contains(got, `"items": [`) {
		t.Errorf("structured = %q", got)
	}
}

// TestHTTPServer and TestSSEServer: the same server over streamable
// HTTP and over HTTP+SSE, with a header it requires; its tools change
// at run time (tools/list_changed).
func TestHTTPServer(t *testing.T) { testHTTP(t, TransportHTTP) }
func TestSSEServer(t *testing.T)  { testHTTP(t, TransportSSE) }

func testHTTP(t *testing.T, transport string) {
	events := filepath.Join(t.TempDir(), "events")
	u := httpServer(t, transport, events, "-want-header", "Authorization: Bearer t0ken")
	f := start(t, Options{}, Server{Name: "notes", Type: transport, URL: u, Headers: []HTTPHeader{{"Authorization", "Bearer t0ken"}}},
		Server{Name: "nohdr", Type: transport, URL: u})
	st := f.set.Status()
	if st[0].State != StateReady || !slices.Equal(st[0].Tools, wantNotes) {
		t.Fatalf("status = %+v", st[0])
	}
	if st[1].State != StateFailed || len(st[1].Tools) != 0 {
		t.Errorf("a server refusing the request without its header: %+v", st[1])
	}
	f.waitNotice("nohdr: did not start")
	checkNotesServer(t, f, events)
	listChanged(t, f)
}

// TestListChanged: a tool added or removed at run time joins or leaves
// the session's tools (stdio).
func TestListChanged(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	f := start(t, Options{}, stdioServer("notes", events))
	listChanged(t, f)
}

func listChanged(t *testing.T, f *fixture) {
	t.Helper()
	if got := f.text("mcp__notes__add_tool", `{"name":"late.one"}`); got != "added late.one" {
		t.Fatalf("add_tool = %q", got)
	}
	f.waitTool("mcp__notes__late_one", true)
	if got := f.text("mcp__notes__late_one", `{}`); got != "I am late.one" {
		t.Errorf("the new tool = %q", got)
	}
	f.text("mcp__notes__remove_tool", `{"name":"late.one"}`)
	f.waitTool("mcp__notes__late_one", false)
	if r := f.call(context.Background(), "mcp__notes__late_one", `{}`); r.Error == nil || r.Error.Code != tools.CodeUnknownTool {
		t.Errorf("a removed tool ran: %+v", r)
	}
}

// TestServersThatDoNotStart: each failure leaves its server without
// tools and gives a notice naming it and the reason; the good server
// next to them is not affected; a server that hangs is killed.
func TestServersThatDoNotStart(t *testing.T) {
	dir := t.TempDir()
	var logs syncBuffer
	hangEvents := filepath.Join(dir, "hang")
	began := time.Now()
	// The hanging server costs the whole StartTimeout; the good one must
	// start within it on a loaded machine too.
	f := start(t, Options{StartTimeout: 5 * time.Second, Log: slog.New(slog.NewTextHandler(&logs, nil))},
		Server{Name: "missing", Command: filepath.Join(dir, "no-such-server")},
		stdioServer("quitter", filepath.Join(dir, "q"), "-exit-at-start"),
		stdioServer("sleeper", hangEvents, "-hang"),
		Server{Name: "empty"},
		Server{Name: "odd", Type: "websocket", URL: "ws://127.0.0.1:1"},
		Server{Name: "refused", Type: TransportHTTP, URL: "http://127.0.0.1:1/mcp"},
		stdioServer("good", filepath.Join(dir, "good"), "-bad-tool"),
	)
	if d := time.Since(began); d > 25*time.Second {
		t.Errorf("starting took %s", d)
	}
	want := map[string]string{
		"missing": "no such file or directory",
		"quitter": "exit status 3: mcpserver: refusing to start",
		"sleeper": "no answer to initialize within 5s",
		"empty":   "not started: no command to start",
		"odd":     `transport "websocket" is not supported`,
		"refused": "did not start",
	}
	for _, st := range f.set.Status() {
		if st.Name == "good" {
			if st.State != StateReady || len(st.Tools) != len(wantNotes) {
				t.Errorf("good: %+v", st)
			}
			continue
		}
		if st.State != StateFailed || len(st.Tools) != 0 || !strings.Contains(st.Reason, want[st.Name]) {
			t.Errorf("%s: %+v, want failed with %q", st.Name, st, want[st.Name])
		}
		f.waitNotice(st.Name+": ", want[st.Name])
	}
	if got := f.names(); len(got) != len(wantNotes) || !strings.HasPrefix(got[0], "mcp__good__") {
		t.Errorf("tools offered: %v", got)
	}
	// A tool whose schema cannot be used is left out, with a notice; its
	// server's other tools are there.
	f.waitNotice(`good: tool "bad_schema" left out: `, "https://example.com/x.json")
	if !strings.Contains(logs.String(), "server=missing") || !strings.Contains(logs.String(), "MCP server ready") {
		t.Errorf("log lines:\n%s", logs.String())
	}
	var pid int
	for _, ev := range readEvents(hangEvents) {
		if p, ok := strings.CutPrefix(ev, "hang pid "); ok {
			pid, _ = strconv.Atoi(p)
		}
	}
	if pid == 0 {
		t.Fatalf("the hanging server never started: %q", readEvents(hangEvents))
	}
	waitGone(t, pid, "the server that did not answer initialize")
}

// TestCrashMidCall: a call to a server that dies fails with the reason;
// the next call restarts it (a new process); when it dies again its
// tools are gone.
func TestCrashMidCall(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	f := start(t, Options{}, stdioServer("notes", events))
	pid1 := f.text("mcp__notes__pid", `{}`)
	r := f.call(context.Background(), "mcp__notes__crash", `{}`)
	if !r.IsError || r.Error == nil || r.Error.Code != CodeServerDown ||
		!strings.Contains(tools.JoinText(r.Content), `MCP server "notes" stopped during the call: the server process ended (exit status 7: mcpserver: crashing on purpose)`) {
		t.Fatalf("crash = %+v", r)
	}
	f.waitNotice("notes: stopped: ", "exit status 7", "restarted at the next call")
	p, _ := strconv.Atoi(pid1)
	waitGone(t, p, "the crashed server")
	if got := f.names(); len(got) != len(wantNotes) {
		t.Errorf("a server that may restart keeps its tools offered: %v", got)
	}
	pid2 := f.text("mcp__notes__pid", `{}`)
	if pid2 == pid1 || pid2 == "" {
		t.Errorf("after the restart: pid %s, before %s", pid2, pid1)
	}
	if got := f.text("mcp__notes__read_note", `{"name":"todo"}`); got != "buy milk" {
		t.Errorf("read_note after the restart = %q", got)
	}
	r = f.call(context.Background(), "mcp__notes__crash", `{}`)
	if !r.IsError || r.Error == nil || r.Error.Code != CodeServerDown {
		t.Fatalf("second crash = %+v", r)
	}
	f.waitNotice("notes: stopped again", "tools are gone")
	f.waitTool("mcp__notes__pid", false)
	if st := f.set.Status()[0]; st.State != StateFailed || len(st.Tools) != 0 {
		t.Errorf("status after the second crash: %+v", st)
	}
}

// TestSlowCall: cancelling a call (the prompt turn's cancel) or its
// timeout returns at once and cancels the call on the server
// (notifications/cancelled: the server's handler sees its context end).
func TestSlowCall(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	f := start(t, Options{CallTimeout: 400 * time.Millisecond}, stdioServer("notes", events))

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	began := time.Now()
	r := f.call(ctx, "mcp__notes__slow", `{"ms":60000}`)
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("a cancelled call returned after %s", d)
	}
	if !r.IsError || !strings.Contains(tools.JoinText(r.Content), "context canceled") {
		t.Errorf("cancelled call = %+v", r)
	}
	waitEvent(t, events, "slow cancelled")

	if err := os.Remove(events); err != nil {
		t.Fatal(err)
	}
	r = f.call(context.Background(), "mcp__notes__slow", `{"ms":60000}`)
	if !r.IsError || r.Error == nil || r.Error.Code != CodeTimeout ||
		tools.JoinText(r.Content) != `Error: MCP server "notes" did not answer slow within 400ms; the call was cancelled` {
		t.Errorf("timed-out call = %+v", r)
	}
	waitEvent(t, events, "slow cancelled")
	// The server is still usable.
	if got := f.text("mcp__notes__slow", `{"ms":1}`); got != "waited" {
		t.Errorf("slow after the timeout = %q", got)
	}
}

// TestTwoSessions: two sessions with different servers, one shared
// registry: neither is offered, nor can run, the other's tools.
func TestTwoSessions(t *testing.T) {
	dir := t.TempDir()
	a := start(t, Options{}, stdioServer("alpha", filepath.Join(dir, "a"), "-extra", "alpha_only"))
	b := start(t, Options{}, stdioServer("beta", filepath.Join(dir, "b"), "-extra", "beta_only"))
	b.shared = a.shared // one agent, one registry, two sessions
	for _, c := range []struct {
		f           *fixture
		own, others string
	}{{a, "mcp__alpha__", "mcp__beta__"}, {b, "mcp__beta__", "mcp__alpha__"}} {
		names := c.f.names()
		if len(names) != len(wantNotes)+1 {
			t.Errorf("%s session: %v", c.own, names)
		}
		for _, n := range names {
			if !strings.HasPrefix(n, c.own) {
				t.Errorf("%s session is offered %s", c.own, n)
			}
		}
		other := c.others + strings.TrimSuffix(strings.TrimPrefix(c.others, "mcp__"), "__") + "_only"
		if r := c.f.call(context.Background(), other, `{}`); r.Error == nil || r.Error.Code != tools.CodeUnknownTool {
			t.Errorf("%s session ran %s: %+v", c.own, other, r)
		}
	}
	if got := a.text("mcp__alpha__alpha_only", `{}`); got != "I am alpha_only" {
		t.Errorf("alpha_only = %q", got)
	}
}

// TestCloseStopsEverything: Close removes the tools and leaves no
// process behind, the server's own children included.
func TestCloseStopsEverything(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	f := start(t, Options{}, stdioServer("notes", events))
	server, _ := strconv.Atoi(f.text("mcp__notes__pid", `{}`))
	child, _ := strconv.Atoi(f.text("mcp__notes__spawn", `{}`))
	if server == 0 || child == 0 || gone(child) {
		t.Fatalf("pids %d %d", server, child)
	}
	began := time.Now()
	f.set.Close()
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("Close took %s", d)
	}
	waitGone(t, server, "the server")
	waitGone(t, child, "the server's child")
	if got := f.names(); len(got) != 0 {
		t.Errorf("tools left after Close: %v", got)
	}
	if st := f.set.Status()[0]; st.State != StateStopped {
		t.Errorf("status after Close: %+v", st)
	}
	f.set.Close() // again: nothing
}

// TestAgentDeath: when the agent process dies without closing anything
// (SIGKILL), its stdio servers die with it (Pdeathsig).
func TestAgentDeath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux only")
	}
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+serverBin)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid == 0 {
		_ = helper.Process.Kill()
		_ = helper.Wait()
		t.Fatalf("the helper printed %q (%v)", line, err)
	}
	if gone(pid) {
		t.Fatalf("server %d is not running", pid)
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()
	waitGone(t, pid, "the server of a killed agent")
}

// TestReplayTool: every tool's Definition, read back by ReplayTool,
// gives a tool with the same class and the same cards as the live one,
// for the call card and for a logged result, and never reaches the
// server; Definition knows only registered tools, ReplayTool refuses
// what is not a definition.
func TestReplayTool(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	f := start(t, Options{}, stdioServer("notes", events))
	picture := f.call(context.Background(), "mcp__notes__picture", `{}`)
	if picture.IsError || len(picture.Meta) == 0 {
		t.Fatalf("picture = %+v", picture)
	}
	args := []string{``, `{}`, `{"name":"todo","text":"x"}`, `{"query":"milk"}`, `not json`}
	before := len(readEvents(events))
	for _, name := range wantNotes {
		live, _ := f.shared.Lookup(f.session, name)
		def, ok := f.set.Definition(name)
		if !ok {
			t.Fatalf("no definition for %s", name)
		}
		replay, err := ReplayTool(name, def)
		if err != nil {
			t.Fatalf("%s: ReplayTool(%s): %v", name, def, err)
		}
		if replay.Name != name || replay.Class != live.Class {
			t.Errorf("%s: replay tool %q class %v, live class %v", name, replay.Name, replay.Class, live.Class)
		}
		for _, a := range args {
			if got, want := replay.CallView(json.RawMessage(a)), live.CallView(json.RawMessage(a)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s(%s): replayed call card %+v, live %+v", name, a, got, want)
			}
		}
		for _, in := range []tools.ResultInput{
			{Content: picture.Content, Meta: picture.Meta},
			{Content: []tools.Content{tools.Text("Error: locked")}, IsError: true},
		} {
			if got, want := replay.ResultView(nil, in), live.ResultView(nil, in); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: replayed result card %+v, live %+v", name, got, want)
			}
		}
		out, err := replay.Execute(context.Background(), &tools.Exec{Name: name})
		var te *tools.Error
		if err == nil || !errors.As(err, &te) || te.Code != CodeServerDown || len(out.Content) != 0 {
			t.Errorf("%s: the replay tool ran: %+v, %v", name, out, err)
		}
	}
	if n := len(readEvents(events)); n != before {
		t.Errorf("replay tools reached the server: %q", readEvents(events)[before:])
	}
	if _, ok := f.set.Definition("mcp__notes__nope"); ok {
		t.Error("a definition for a tool the server does not have")
	}
	for _, bad := range []string{``, `[]`, `{"server":"notes"}`, `{"tool":1}`} {
		if _, err := ReplayTool("mcp__x__y", json.RawMessage(bad)); err == nil {
			t.Errorf("ReplayTool(%s) accepted it", bad)
		}
	}
}
