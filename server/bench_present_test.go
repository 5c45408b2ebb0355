package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/present"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// benchPresentPair presents a card_diff call and its result and sends the
// updates as `session/update` notifications through an acp.Conn writing
// to io.Discard: the path the bridge takes.
func benchPresentPair(b *testing.B, reg *tools.Registry) {
	in, stop := io.Pipe()
	conn := acp.NewConn(in, io.Discard, idleHandler{}, nil)
	b.Cleanup(func() { stop.Close(); <-conn.Done() })
	runPresentPair(b, reg, func(n acp.SessionNotification) error { return conn.SessionUpdate(context.Background(), n) })
}

// BenchmarkPresentPairEncoder is BenchmarkPresentPair with the updates
// encoded by a plain json.Encoder (HTML escaping on) instead of the
// connection's direct path.
func BenchmarkPresentPairEncoder(b *testing.B) {
	reg := tools.NewRegistry()
	for _, tl := range cardTools() {
		_ = reg.Register(tl)
	}
	b.ReportAllocs()
	enc := json.NewEncoder(io.Discard)
	runPresentPair(b, reg, func(n acp.SessionNotification) error { return enc.Encode(n) })
}

// runPresentPair presents one call and its result per iteration. The
// calls cycle through 1024 different argument texts, so that no decoded
// arguments survive from one pair to the next (as with real calls): the
// cache Define keeps for presenters saves only the second decode.
func runPresentPair(b *testing.B, reg *tools.Registry, send func(acp.SessionNotification) error) {
	const distinct = 1024
	pairs := make([][2]session.Event, distinct)
	for i := range pairs {
		args := fmt.Sprintf(`{"path":"config%d.txt"}`, i)
		pairs[i] = [2]session.Event{
			{Data: session.ToolCall{CallID: "call_1", Name: "card_diff", Arguments: args}},
			{Data: session.ToolResult{CallID: "call_1", Content: []tools.Content{tools.Text("ok")}, Meta: json.RawMessage(`{"line":2}`)}},
		}
	}
	p := present.NewPresenter(present.View{Cwd: "/proj", LineBase: 1}, reg)
	b.ResetTimer()
	defer reportCPU(b)()
	for i := 0; i < b.N; i++ {
		for _, ev := range pairs[i%distinct] {
			for _, u := range p.Updates(ev) {
				if err := send(acp.SessionNotification{SessionID: "s", Update: u}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// reportCPU starts counting the process's CPU time (user and system,
// every thread: the garbage collector's work included) and returns the
// function that reports it per iteration as cpu-ns/op. On a loaded
// machine ns/op (wall time) also counts the time other processes held
// the CPU; cpu-ns/op does not, so it is the figure to compare between
// runs there (with GOMAXPROCS=1 the two agree on an idle machine).
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// cpuTime is the process's user plus system CPU time in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// idleHandler serves nothing: the benchmark's connection only writes.
type idleHandler struct{}

func (idleHandler) HandleNotification(context.Context, string, json.RawMessage) {}
func (idleHandler) PrepareRequest(context.Context, string, json.RawMessage) acp.RequestFunc {
	return nil
}
func (idleHandler) Shutdown() {}
