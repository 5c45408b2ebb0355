package bridge

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// TestTurnQueueStates walks a session's turn runner through its states
// without running turns: prompts wait behind a running turn up to the
// bound; a boundary hands over the steering ones and ends the turn for
// the others; a steering prompt after the last boundary waits for a turn
// of its own; the turn's end answers the steering prompts it took and
// keeps the session busy until the next waiting prompt starts; a cancel
// answers every waiting prompt cancelled.
func TestTurnQueueStates(t *testing.T) {
	b := New(Config{Tools: tools.NewRegistry(), PromptQueue: 2})
	s := b.openSession("s1", t.TempDir(), nil)
	ctx := context.Background()
	text := func(s string) []tools.Content { return []tools.Content{tools.Text(s)} }
	_, s.cancel = context.WithCancel(ctx) // a turn runs
	s.mu.Lock()
	_, err1 := b.enqueue(ctx, s, text("steer"), true)
	_, err2 := b.enqueue(ctx, s, text("next"), false)
	_, err3 := b.enqueue(ctx, s, text("third"), false)
	s.mu.Unlock()
	var e *acp.Error
	if err1 != nil || err2 != nil || !errors.As(err3, &e) || e.Code != acp.CodeInvalidParams || !strings.Contains(e.Message, "--prompt-queue 2") {
		t.Fatalf("enqueue errors %v, %v, %v; want the third refused naming the bound", err1, err2, err3)
	}
	steer, next := s.queue.waiting[0], s.queue.waiting[1]
	bd := s.atBoundary(false)
	if len(bd.Steer) != 1 || tools.JoinText(bd.Steer[0]) != "steer" || !bd.End || len(s.queue.waiting) != 1 || len(s.queue.riders) != 1 {
		t.Fatalf("boundary %+v, waiting %d, riders %d", bd, len(s.queue.waiting), len(s.queue.riders))
	}
	if bd := s.atBoundary(true); len(bd.Steer) != 0 || !s.queue.final {
		t.Fatalf("final boundary %+v, final %v", bd, s.queue.final)
	}
	s.mu.Lock()
	_, err := b.enqueue(ctx, s, text("late steer"), true)
	s.mu.Unlock()
	if late := s.queue.waiting[len(s.queue.waiting)-1]; err != nil || late.steer {
		t.Fatalf("a steering prompt after the last boundary: %v, steer %v; want it to wait for its own turn", err, late.steer)
	}
	if !s.turnEnded(promptResult{resp: acp.PromptResponse{StopReason: acp.StopEndTurn}}) || s.cancel == nil {
		t.Fatal("the turn's end with prompts waiting: the session must stay busy until the next starts")
	}
	s.startNext()
	select {
	case <-steer.done:
		if steer.res.resp.StopReason != acp.StopEndTurn || steer.turnCtx != nil {
			t.Errorf("the steering prompt got %+v", steer.res)
		}
	default:
		t.Fatal("the steering prompt was not answered at the turn's end")
	}
	select {
	case <-next.done:
		if next.turnCtx == nil || s.cancel == nil || s.queue.final || len(s.queue.waiting) != 1 {
			t.Errorf("the next prompt did not take the session over (turnCtx %v, cancel set %v, final %v, waiting %d)", next.turnCtx, s.cancel != nil, s.queue.final, len(s.queue.waiting))
		}
	default:
		t.Fatal("the next prompt's turn did not start")
	}
	late := s.queue.waiting[0]
	s.cancelTurn()
	<-late.done
	if !late.cancelled || len(s.queue.waiting) != 0 || next.turnCtx.Err() == nil {
		t.Errorf("after the cancel: late cancelled %v, waiting %d, running turn's context %v", late.cancelled, len(s.queue.waiting), next.turnCtx.Err())
	}
	if s.turnEnded(promptResult{resp: acp.PromptResponse{StopReason: acp.StopCancelled}}) || s.cancel != nil {
		t.Error("the session is not idle after its last turn")
	}
}
