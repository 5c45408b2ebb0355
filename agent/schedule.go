// This file schedules a step's tool calls: concurrency-safe calls run
// together (at most Config.MaxParallel), the others one at a time in the
// model's order, each through the registry's chain.

package agent

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// resolve resolves the call id of tool name with the complete arguments
// args, once (tools.Registry.Resolve): every later step reads it.
func (t *turnRun) resolve(id, name, args string) *tools.Call {
	return t.a.cfg.Tools.Resolve(t.s.Tools, id, name, json.RawMessage(args))
}

// resolvedAs is the resolution of the response's call id of tool name
// with arguments args: the one made when its arguments completed while
// streaming (sc, which may be nil), when that is the same call, else a
// new one.
func (t *turnRun) resolvedAs(sc *streamCall, id, name, args string) *tools.Call {
	if sc != nil && sc.call.Matches(name, []byte(args)) {
		return sc.call
	}
	return t.resolve(id, name, args)
}

// concurrent reports whether c's tool declares itself concurrency-safe
// (an unknown tool is not: it runs alone, and fails).
func (t *turnRun) concurrent(c session.ToolCallRef) bool {
	return c.Call != nil && c.Call.Found && c.Call.Tool.ConcurrencySafe
}

// exec is the tools.Exec of call c; onStart, when set, runs after the
// ToolExec event when the call passed every middleware.
func (t *turnRun) exec(c session.ToolCallRef, onStart func()) *tools.Exec {
	return &tools.Exec{CallID: c.CallID, Name: c.Name, Args: []byte(c.Arguments), Call: c.Call, Session: t.s.Tools,
		OnStart: func() {
			t.emit(session.ToolExec{CallID: c.CallID})
			if onStart != nil {
				onStart()
			}
		},
		OnPreview: func(v tools.ToolCallView) {
			if d, ok := v.(tools.DiffCall); ok {
				t.emit(session.ToolPreview{CallID: c.CallID, Preview: d})
			}
		},
		Progress: func(p tools.Progress) {
			t.emit(session.ToolProgress{CallID: c.CallID, Progress: p})
			if p.Plan != nil {
				t.emit(session.Plan{CallID: c.CallID, Entries: p.Plan})
			}
		}}
}

// runOne runs one call alone and records its result (marked cancelled
// when the turn was cancelled meanwhile, and not run when that happened
// before it passed its middlewares). It returns the result's EndTurn
// message ("" when the call does not end the turn).
func (t *turnRun) runOne(ctx context.Context, c session.ToolCallRef) string {
	t.logCall(c)
	started := false
	res := t.a.cfg.Tools.Execute(ctx, t.exec(c, func() {
		started = true
		t.beforeChange(ctx, c)
	}))
	if ctx.Err() != nil {
		t.result(c.CallID, cancelledWith(res), true, !started)
		return ""
	}
	t.result(c.CallID, res, false, false)
	return res.EndTurn
}

// parallelSlot is one call of a parallel run.
type parallelSlot struct {
	passed   chan struct{} // closed once the call passed its middlewares or ended
	passOnce sync.Once
	done     chan struct{} // closed once res is set, or the call will never run
	res      tools.Result
	// cancelled: the turn was cancelled when the call ended; notRun: it
	// was cancelled before the call started; started: the call passed
	// its middlewares and ran.
	cancelled, notRun, started bool
}

func (p *parallelSlot) pass() { p.passOnce.Do(func() { close(p.passed) }) }

// runParallel runs calls (consecutive concurrency-safe calls of one
// response) at once, at most cfg.MaxParallel in flight. Every card is
// announced first, in the model's order. A call starts once the call
// before it has passed its middlewares (or ended), so the permission
// prompts of the run are asked one at a time, in order; the calls then
// overlap. The results are recorded in the model's order, each as soon
// as it and those before it are done, so the log (and a session/load
// replay) keeps that order. A cancel stops the calls not yet started
// (their cards close as cancelled), reaches the running ones through
// ctx, and waits for them; every call's card is closed before it
// returns.
func (t *turnRun) runParallel(ctx context.Context, calls []session.ToolCallRef) {
	for _, c := range calls {
		t.logCall(c)
	}
	slots := make([]*parallelSlot, len(calls))
	for k := range slots {
		slots[k] = &parallelSlot{passed: make(chan struct{}), done: make(chan struct{})}
	}
	sem := make(chan struct{}, t.a.cfg.MaxParallel)
	var workers sync.WaitGroup
	launcher := make(chan struct{})
	go func() {
		defer close(launcher)
		for k, c := range calls {
			if k > 0 {
				select {
				case <-slots[k-1].passed:
				case <-ctx.Done():
				}
			}
			if ctx.Err() == nil {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				for _, rest := range slots[k:] {
					rest.notRun = true
					close(rest.done)
				}
				return
			}
			slot := slots[k]
			workers.Go(func() {
				defer func() { <-sem }()
				res := t.a.cfg.Tools.Execute(ctx, t.exec(c, func() { slot.started = true; slot.pass() }))
				slot.res, slot.cancelled = res, ctx.Err() != nil
				slot.pass()
				close(slot.done)
			})
		}
	}()
	for k, c := range calls {
		slot := slots[k]
		<-slot.done
		switch {
		case slot.notRun:
			t.result(c.CallID, cancelledResult(c.CallID), true, true)
		case slot.cancelled:
			t.result(c.CallID, cancelledWith(slot.res), true, !slot.started)
		default:
			t.result(c.CallID, slot.res, false, false)
		}
	}
	<-launcher
	workers.Wait()
}
