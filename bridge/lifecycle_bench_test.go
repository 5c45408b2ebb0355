package bridge

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// toolCallLogEvents is the length of a logTurns log with 1,002 tool calls
// in 334 whole turns of 21 events (three calls each).
const toolCallLogEvents = 334 * 21

// BenchmarkResumeVsLoad1000ToolCalls opens a session log of 1,002 tool
// calls (7,014 events, about 2.4 MB) in a fresh bridge, once with
// session/load (read and check the log, replay every event through an
// acp.Conn to a discarding writer) and once with session/resume (check
// the log's envelope, decode only what restore reads, answer); each is
// timed to its answer. Reported: load-ns/op, resume-ns/op, their ratio
// resume/load-% (target: at most 10), and decode-ns/op, what the first
// prompt after the resume then spends decoding the rest of the log
// before its model request.
func BenchmarkResumeVsLoad1000ToolCalls(b *testing.B) {
	root, cwd := b.TempDir(), "/work/project"
	logTurns(b, root, "sess_bench", cwd, toolCallLogEvents)
	var loadT, resumeT, decodeT time.Duration
	open := func(f func(br *Bridge) error) (time.Duration, *Bridge, func()) {
		br := New(Config{StateDir: root, Tools: tools.NewRegistry()})
		in, stop := io.Pipe()
		conn := br.Serve(in, &countingWriter{})
		start := time.Now()
		if err := f(br); err != nil {
			b.Fatal(err)
		}
		return time.Since(start), br, func() {
			br.session("sess_bench").agent.Store.Close()
			stop.Close()
			<-conn.Done()
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		d, _, done := open(func(br *Bridge) error {
			_, err := load(br, acp.LoadSessionRequest{SessionID: "sess_bench", Cwd: cwd, McpServers: []acp.McpServer{}})
			return err
		})
		loadT += d
		done()
		d, br, done := open(func(br *Bridge) error {
			run, err := br.ResumeSession(ctx, acp.ResumeSessionRequest{SessionID: "sess_bench", Cwd: cwd})
			if err == nil {
				_, err = run(ctx)
			}
			return err
		})
		resumeT += d
		start := time.Now()
		st := br.session("sess_bench").agent.Store
		if err := st.Ready(); err != nil || st.Len() != toolCallLogEvents {
			b.Fatalf("resumed store: %d events, %v", st.Len(), err)
		}
		decodeT += time.Since(start)
		done()
	}
	b.ReportMetric(float64(loadT.Nanoseconds())/float64(n), "load-ns/op")
	b.ReportMetric(float64(resumeT.Nanoseconds())/float64(n), "resume-ns/op")
	b.ReportMetric(float64(decodeT.Nanoseconds())/float64(n), "decode-ns/op")
	b.ReportMetric(100*float64(resumeT)/float64(loadT), "resume/load-%")
}

// TestResumeDecodesLazily: a resume decodes only the events restore
// reads; the store then holds every event once its first turn asks.
func TestResumeDecodesLazily(t *testing.T) {
	root, cwd := t.TempDir(), t.TempDir()
	logTurns(t, root, "s1", cwd, 42)
	br := New(Config{StateDir: root, Tools: tools.NewRegistry()})
	c := &recordingClient{}
	br.SetClient(c)
	ctx := context.Background()
	run, err := br.ResumeSession(ctx, acp.ResumeSessionRequest{SessionID: "s1", Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(c.sent) != 0 {
		t.Errorf("resume sent %d updates: %s", len(c.sent), c.kinds())
	}
	st := br.session("s1").agent.Store
	if st.Len() != 42 {
		t.Errorf("Len = %d", st.Len())
	}
	// An event emitted before the decode follows the logged ones.
	st.Emit(session.ModeChange{ModeID: "plan"})
	ev := st.Events()
	if len(ev) != 43 || ev[42].Seq != 42 || ev[0].Data != (session.TurnStart{Turn: 1}) {
		t.Fatalf("%d events after the decode", len(ev))
	}
	st.Close()
	ld, err := session.ReadLog(logPath(t, root, "s1"))
	if err != nil || len(ld.Events) != 43 || ld.NeedsRepair() {
		t.Fatalf("log after resume: %v", err)
	}
	if m, ok := ld.Events[42].Data.(session.ModeChange); !ok || m.ModeID != "plan" {
		t.Errorf("last event %+v", ld.Events[42])
	}
}

func logPath(t *testing.T, root, id string) string {
	t.Helper()
	p, err := session.Find(root, id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
