package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// waitLimit bounds every wait of these tests: far longer than any step
// takes on a loaded machine, so a timeout means a real failure.
const waitLimit = 10 * time.Second

// timeline records what the fake tools do, in order.
type timeline struct {
	mu     sync.Mutex
	events []string
	cond   map[string]chan struct{}
}

func newTimeline() *timeline { return &timeline{cond: map[string]chan struct{}{}} }

// ch returns the channel closed when event e is recorded.
func (tl *timeline) ch(e string) chan struct{} {
	c, ok := tl.cond[e]
	if !ok {
		c = make(chan struct{})
		tl.cond[e] = c
	}
	return c
}

func (tl *timeline) add(e string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.events = append(tl.events, e)
	close(tl.ch(e))
}

// await waits for event e; false after waitLimit or when ctx ends.
func (tl *timeline) await(ctx context.Context, e string) bool {
	tl.mu.Lock()
	c := tl.ch(e)
	tl.mu.Unlock()
	select {
	case <-c:
		return true
	case <-ctx.Done():
		return false
	case <-time.After(waitLimit):
		return false
	}
}

func (tl *timeline) String() string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return strings.Join(tl.events, ", ")
}

// index returns where e was recorded, -1 if never.
func (tl *timeline) index(e string) int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for i, x := range tl.events {
		if x == e {
			return i
		}
	}
	return -1
}

// stepTool is a tool whose calls follow a script given in the arguments:
// {"id":"r1","await":["start r2"]} records "start r1", waits for each
// awaited event (an error when one never comes), records "end r1".
// "block":true then records "blocked r1" and waits for the turn's cancel
// instead (the call fails with the context's error).
func stepTool(name string, safe bool, tl *timeline) tools.Tool {
	return tools.Tool{Name: name, Parameters: []byte(`{"type":"object"}`), ConcurrencySafe: safe, Class: tools.ClassReadOnly,
		Execute: func(ctx context.Context, ex *tools.Exec) (tools.Output, error) {
			var a struct {
				ID    string   `json:"id"`
				Await []string `json:"await"`
				Block bool     `json:"block"`
			}
			if err := json.Unmarshal(ex.Args, &a); err != nil {
				return tools.Output{}, err
			}
			tl.add("start " + a.ID)
			for _, e := range a.Await {
				if !tl.await(ctx, e) {
					return tools.Output{}, fmt.Errorf("%s never saw %q (events: %s)", a.ID, e, tl)
				}
			}
			if a.Block {
				tl.add("blocked " + a.ID)
				<-ctx.Done()
				return tools.Output{}, ctx.Err()
			}
			tl.add("end " + a.ID)
			return tools.Output{Content: []tools.Content{tools.Text("done " + a.ID)}}, nil
		}}
}

// call is a model tool call of stepTool name with the script args.
func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

type parallelRun struct {
	out    Outcome
	events []session.Event
	client *scripted
}

// runParallelTurn runs one turn whose first response makes calls; mw,
// when set, is the registry's middleware; cancelOn, when set, cancels
// the turn once that event is recorded.
func runParallelTurn(t *testing.T, cfg Config, tl *timeline, mw tools.Middleware, cancelOn string, calls ...llm.ToolCall) parallelRun {
	t.Helper()
	reg := tools.NewRegistry()
	for _, tool := range []tools.Tool{stepTool("safe", true, tl), stepTool("alone", false, tl)} {
		if err := reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	reg.Use(mw)
	client := &scripted{resps: []*llm.Response{{ToolCalls: calls, FinishReason: "tool_calls"}, {Text: "ok", FinishReason: "stop"}}}
	cfg.Client, cfg.Tools = client, reg
	a := New(cfg)
	var (
		mu  sync.Mutex
		all []session.Event
	)
	store := session.NewStore(func(ev session.Event) {
		mu.Lock()
		all = append(all, ev)
		mu.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if cancelOn != "" {
		go func() {
			if tl.await(ctx, cancelOn) {
				cancel()
			}
		}()
	}
	done := make(chan Outcome)
	go func() {
		done <- a.Turn(ctx, NewSession(store, tools.NewSession("s", t.TempDir())), []tools.Content{tools.Text("go")}, "")
	}()
	var out Outcome
	select {
	case out = <-done:
	case <-time.After(3 * waitLimit):
		t.Fatalf("the turn did not end; events: %s", tl)
	}
	mu.Lock()
	defer mu.Unlock()
	return parallelRun{out, append([]session.Event(nil), all...), client}
}

// resultsOf returns the logged results in order as "id:text".
func resultsOf(evs []session.Event) []string {
	var out []string
	for _, e := range evs {
		if r, ok := e.Data.(session.ToolResult); ok {
			out = append(out, r.CallID+":"+tools.JoinText(r.Content))
		}
	}
	return out
}

// TestParallelAtLeastFourInFlight: six concurrency-safe calls of one
// response are all in flight at once even on one CPU: each waits until
// every other has started, which sequential calls never would.
func TestParallelAtLeastFourInFlight(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	tl := newTimeline()
	var calls []llm.ToolCall
	for i := 1; i <= 6; i++ {
		var await []string
		for j := 1; j <= 6; j++ {
			if j != i {
				await = append(await, fmt.Sprintf(`"start r%d"`, j))
			}
		}
		calls = append(calls, call(fmt.Sprintf("c%d", i), "safe", fmt.Sprintf(`{"id":"r%d","await":[%s]}`, i, strings.Join(await, ","))))
	}
	r := runParallelTurn(t, Config{}, tl, nil, "", calls...)
	if r.out.Err != nil || r.out.StopReason != session.EndTurn {
		t.Fatalf("outcome %+v", r.out)
	}
	want := "c1:done r1 c2:done r2 c3:done r3 c4:done r4 c5:done r5 c6:done r6"
	if got := strings.Join(resultsOf(r.events), " "); got != want {
		t.Errorf("results %s\nwant %s", got, want)
	}
	// The model gets the results in its own order.
	msgs := r.client.reqs[1].Messages
	var ids []string
	for _, m := range msgs {
		if m.Role == "tool" {
			ids = append(ids, m.ToolCallID)
		}
	}
	if fmt.Sprint(ids) != "[c1 c2 c3 c4 c5 c6]" {
		t.Errorf("tool messages to the model %v", ids)
	}
}

// TestParallelOrder: cards are announced first and results logged in the
// model's order even when a later call ends first; a call that is not
// concurrency-safe waits for the run before it and runs before the calls
// after it.
func TestParallelOrder(t *testing.T) {
	tl := newTimeline()
	r := runParallelTurn(t, Config{}, tl, nil, "",
		// r1 ends only after r2 ended: r2's result is ready first.
		call("c1", "safe", `{"id":"r1","await":["end r2"]}`),
		call("c2", "safe", `{"id":"r2","await":["start r1"]}`),
		call("c3", "alone", `{"id":"w"}`),
		call("c4", "safe", `{"id":"r3","await":["start r4"]}`),
		call("c5", "safe", `{"id":"r4","await":["start r3"]}`),
	)
	if r.out.Err != nil || r.out.StopReason != session.EndTurn {
		t.Fatalf("outcome %+v; events: %s", r.out, tl)
	}
	if got := strings.Join(resultsOf(r.events), " "); got != "c1:done r1 c2:done r2 c3:done w c4:done r3 c5:done r4" {
		t.Errorf("results %s (events: %s)", got, tl)
	}
	// w starts after r1 and r2 ended, and ends before r3 and r4 start.
	if w := tl.index("start w"); w < tl.index("end r1") || w < tl.index("end r2") ||
		tl.index("end w") > tl.index("start r3") || tl.index("end w") > tl.index("start r4") {
		t.Errorf("the lone call overlapped a run: %s", tl)
	}
	// Every call of a run is announced (tool/call) before any result of
	// it, in the model's order.
	var seq []string
	for _, e := range r.events {
		switch d := e.Data.(type) {
		case session.ToolCall:
			seq = append(seq, "call "+d.CallID)
		case session.ToolResult:
			seq = append(seq, "result "+d.CallID)
		default:
			// Only calls and results are ordered here.
		}
	}
	want := "call c1, call c2, result c1, result c2, call c3, result c3, call c4, call c5, result c4, result c5"
	if got := strings.Join(seq, ", "); got != want {
		t.Errorf("event order\n%s\nwant\n%s", got, want)
	}
}

// TestParallelPermissionOrder: the middleware (the permission step) of
// a run's calls is passed one call at a time, in the model's order, while
// the calls themselves still overlap.
func TestParallelPermissionOrder(t *testing.T) {
	tl := newTimeline()
	var (
		mu            sync.Mutex
		asking, worst int
		order         []string
	)
	mw := func(ctx context.Context, ex *tools.Exec, next tools.Next) tools.Result {
		mu.Lock()
		asking++
		worst = max(worst, asking)
		order = append(order, ex.CallID)
		mu.Unlock()
		// An "answer" that takes a while: an ask of the next call, if it
		// were not held back, would start meanwhile.
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		asking--
		mu.Unlock()
		return next(ctx, ex)
	}
	r := runParallelTurn(t, Config{}, tl, mw, "",
		call("c1", "safe", `{"id":"r1","await":["start r3"]}`),
		call("c2", "safe", `{"id":"r2"}`),
		call("c3", "safe", `{"id":"r3","await":["start r1"]}`),
	)
	if r.out.Err != nil || r.out.StopReason != session.EndTurn {
		t.Fatalf("outcome %+v; events: %s", r.out, tl)
	}
	mu.Lock()
	defer mu.Unlock()
	if worst != 1 || fmt.Sprint(order) != "[c1 c2 c3]" {
		t.Errorf("asks overlapped (%d at once) or ran out of order %v", worst, order)
	}
	if got := strings.Join(resultsOf(r.events), " "); got != "c1:done r1 c2:done r2 c3:done r3" {
		t.Errorf("results %s", got)
	}
}

// TestParallelCancel: a cancel while a run is in flight stops the running
// calls and the ones not started yet; every announced call gets exactly
// one result (a finished one keeps its own, a stopped one what it
// returned, one never started the cancelled text), the call after the
// run never runs, and the turn ends cancelled.
func TestParallelCancel(t *testing.T) {
	const stopped = "Error: context canceled"
	for _, c := range []struct {
		name     string
		parallel int
		cancelOn string
		want     string
	}{
		// All three started: c1 finished, c2 and c3 stopped.
		{"all running", 0, "blocked r3", "c1:done r1 c2:" + stopped + " c3:" + stopped + " c4:" + CancelledText},
		// One at a time: c3 never started.
		{"not started", 1, "blocked r2", "c1:done r1 c2:" + stopped + " c3:" + CancelledText + " c4:" + CancelledText},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl := newTimeline()
			r := runParallelTurn(t, Config{MaxParallel: c.parallel}, tl, nil, c.cancelOn,
				call("c1", "safe", `{"id":"r1"}`),
				call("c2", "safe", `{"id":"r2","block":true}`),
				call("c3", "safe", `{"id":"r3","await":["end r1"],"block":true}`),
				call("c4", "alone", `{"id":"w"}`),
			)
			if r.out.StopReason != session.EndCancelled {
				t.Fatalf("outcome %+v", r.out)
			}
			if got := strings.Join(resultsOf(r.events), " "); got != c.want {
				t.Errorf("results %s\nwant %s\nevents: %s", got, c.want, tl)
			}
			if tl.index("start w") >= 0 || c.parallel == 1 && tl.index("start r3") >= 0 {
				t.Errorf("a call ran after the cancel: %s", tl)
			}
			if len(r.client.reqs) != 1 {
				t.Errorf("%d model requests after a cancel, want 1", len(r.client.reqs))
			}
			res := map[string]int{}
			for _, e := range r.events {
				if d, ok := e.Data.(session.ToolResult); ok {
					res[d.CallID]++
					if d.CallID != "c1" && !d.Cancelled {
						t.Errorf("%s not marked cancelled", d.CallID)
					}
				}
			}
			for _, id := range []string{"c1", "c2", "c3", "c4"} {
				if res[id] != 1 {
					t.Errorf("%s has %d results", id, res[id])
				}
			}
		})
	}
}
