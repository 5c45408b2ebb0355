package bridge

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acpclient"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

type seenKey struct{}

type seen struct{ files []string }

func init() {
	tools.Carry(seenKey{}, func(v any) any { return &seen{files: append([]string{}, v.(*seen).files...)} })
}

// TestDeleteClosesFirst: a live session whose log was never written is
// deleted; a late event (a title request finishing, say) does not create
// its log.
func TestDeleteClosesFirst(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	br := New(Config{StateDir: root, Tools: tools.NewRegistry()})
	br.SetClient(&recordingClient{})
	s := br.openSession("s1", cwd, nil)
	if _, err := br.DeleteSession(context.Background(), acp.DeleteSessionRequest{SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	s.agent.Store.Emit(session.Title{Title: "late"})
	if err := s.agent.Store.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(session.LogPath(root, cwd, "s1")); !os.IsNotExist(err) {
		t.Errorf("the deleted session's log was created: %v", err)
	}
	if _, err := br.DeleteSession(context.Background(), acp.DeleteSessionRequest{SessionID: "s1"}); err == nil {
		t.Error("a second delete succeeded")
	}
}

// TestForkCarriesState: a fork of a live session's whole conversation
// gets a copy of its carried tool state and remembered answers and its
// mode; a fork at a message gets the mode only.
func TestForkCarriesState(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	logTurns(t, root, "s1", cwd, 21)
	br := New(Config{StateDir: root, Tools: tools.NewRegistry()})
	br.SetClient(&recordingClient{})
	ctx := context.Background()
	run, err := br.ResumeSession(ctx, acp.ResumeSessionRequest{SessionID: "s1", Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx); err != nil {
		t.Fatal(err)
	}
	src := br.session("s1")
	src.agent.Tools.Value(seenKey{}, func() any { return &seen{files: []string{"a.go"}} })
	src.perm.setMode("acceptEdits")
	whole, err := br.ForkSession(ctx, acp.ForkSessionRequest{SessionID: "s1", Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	f := br.session(whole.SessionID)
	got, _ := f.agent.Tools.Value(seenKey{}, nil).(*seen)
	if got == nil || len(got.files) != 1 || got == src.agent.Tools.Value(seenKey{}, nil) || f.perm.mem == src.perm.mem {
		t.Errorf("whole fork's tool state %+v", got)
	}
	if whole.Modes.CurrentModeID != "acceptEdits" || f.agent.Store.Len() != 21 {
		t.Errorf("whole fork: mode %s, %d events", whole.Modes.CurrentModeID, f.agent.Store.Len())
	}
	cut, err := br.ForkSession(ctx, acp.ForkSessionRequest{SessionID: "s1", Cwd: cwd, Meta: acp.Meta(`{"messageId":"turn1-step2"}`)})
	if err != nil {
		t.Fatal(err)
	}
	c := br.session(cut.SessionID)
	if v := c.agent.Tools.Value(seenKey{}, nil); v != nil || cut.Modes.CurrentModeID != "acceptEdits" {
		t.Errorf("cut fork: tool state %v, mode %s", v, cut.Modes.CurrentModeID)
	}
	if n := c.agent.Store.Len(); n != 13 {
		t.Errorf("cut fork has %d events", n)
	}
	for _, s := range []*liveSession{src, f, c} {
		s.agent.Store.Close()
	}
}

// TestNoticePath: a tool's notice becomes a `notice` update when the
// editor advertised session.notices, and nothing is sent otherwise.
func TestNoticePath(t *testing.T) {
	for _, withCap := range []bool{true, false} {
		br := New(Config{Tools: tools.NewRegistry()})
		c := &recordingClient{}
		br.SetClient(c)
		caps := &acp.ClientCapabilities{}
		if withCap {
			caps.Session = &acp.ClientSessionCapabilities{Notices: &acp.Empty{}}
		}
		if _, err := br.Initialize(context.Background(), acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps}); err != nil {
			t.Fatal(err)
		}
		s := br.openSession("s1", t.TempDir(), nil)
		tools.Notify(s.agent.Tools, tools.Notice{Severity: tools.NoticeWarning, Title: "The sandbox is not available", Description: "no Landlock"})
		want := ""
		if withCap {
			want = "notice"
		}
		if got := c.kinds(); got != want {
			t.Errorf("notices=%v: sent %q", withCap, got)
		}
		if withCap {
			n := c.sent[0].(acp.Notice)
			if n.Severity != "warning" || n.Title != "The sandbox is not available" || n.Description != "no Landlock" {
				t.Errorf("notice %+v", n)
			}
		}
		if len(s.agent.Store.Events()) != 0 {
			t.Error("a notice was kept in the session")
		}
	}
}

// TestSandboxNoticeAfterAnswer: with a sandbox warning, every session
// opened (new, resume, fork) gets its slash commands, then one warning
// notice, both written after the answer that names the session.
func TestSandboxNoticeAfterAnswer(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	br := New(Config{StateDir: root, Tools: tools.NewRegistry(), SandboxWarning: func() string { return "shell commands run without a sandbox (no Landlock)" }})
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	conn := br.Serve(toAgentR, fromAgentW)
	c := acpclient.New(toAgentW)
	var mu sync.Mutex
	var lines []acpclient.Message
	c.OnMessage = func(m acpclient.Message) {
		mu.Lock()
		lines = append(lines, m)
		mu.Unlock()
	}
	c.Start(fromAgentR)
	defer func() {
		toAgentW.Close()
		<-conn.Done()
		fromAgentW.Close()
	}()
	// The bounds only end a test that would hang: on a loaded machine a
	// session's first log write alone can take seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	caps := map[string]any{"session": map[string]any{"notices": map[string]any{}}}
	if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps}, nil); err != nil {
		t.Fatal(err)
	}
	var ns acp.NewSessionResponse
	if err := c.Call(ctx, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &ns); err != nil {
		t.Fatal(err)
	}
	var fs acp.ForkSessionResponse
	if err := c.Call(ctx, "session/fork", map[string]any{"sessionId": ns.SessionID, "cwd": cwd}, &fs); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "session/resume", map[string]any{"sessionId": ns.SessionID, "cwd": cwd}, nil); err != nil {
		t.Fatal(err)
	}
	// The ten messages: four answers (initialize, new, fork, resume: each
	// request is sent once the one before is answered), three commands
	// updates and three notices. The commands and the notice follow the
	// answer that opened their session; they may come
	// after a later answer too (the next request can be answered before
	// the updates of the one before are written), so the order checked is
	// each update's against its own answer.
	deadline := time.Now().Add(30 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		mu.Lock()
		got = got[:0]
		for _, m := range lines {
			switch {
			case m.Method == "session/update":
				var n struct {
					SessionID string `json:"sessionId"`
					Update    struct {
						Kind     string `json:"sessionUpdate"`
						Severity string `json:"severity"`
					} `json:"update"`
				}
				_ = json.Unmarshal(m.Params, &n)
				who := "new"
				if n.SessionID == fs.SessionID {
					who = "fork"
				} else if n.SessionID != ns.SessionID {
					who = n.SessionID
				}
				got = append(got, who+":"+n.Update.Kind+":"+n.Update.Severity)
			case m.Result != nil:
				got = append(got, "answer")
			default:
				got = append(got, "other:"+m.Method)
			}
		}
		mu.Unlock()
		if len(got) >= 10 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	var answers, newCmds, newNotices, forkCmds, forkNotices []int
	for i, g := range got {
		switch g {
		case "answer":
			answers = append(answers, i)
		case "new:available_commands_update:":
			newCmds = append(newCmds, i)
		case "new:notice:warning":
			newNotices = append(newNotices, i)
		case "fork:available_commands_update:":
			forkCmds = append(forkCmds, i)
		case "fork:notice:warning":
			forkNotices = append(forkNotices, i)
		}
	}
	// answers: initialize, new, fork, resume; each opening's commands
	// after its answer, its notice after its commands (new's after new's
	// answer, the fork's after fork's, the resume's after resume's).
	if len(got) != 10 || len(answers) != 4 || len(newCmds) != 2 || len(newNotices) != 2 || len(forkCmds) != 1 || len(forkNotices) != 1 ||
		newCmds[0] < answers[1] || newNotices[0] < newCmds[0] || forkCmds[0] < answers[2] || forkNotices[0] < forkCmds[0] ||
		newCmds[1] < answers[3] || newNotices[1] < newCmds[1] {
		t.Errorf("messages %q\nwant the four answers and after each of the last three (new, fork, resume: new:, fork:, new:) the commands, then a warning notice", got)
	}
	for _, id := range []string{ns.SessionID, fs.SessionID} {
		br.session(id).agent.Store.Close()
	}
}
