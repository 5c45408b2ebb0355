package llm

import (
	"context"
	"sync"
	"testing"
)

// heldLister answers each ListModels call with the list the test
// releases for it, in the order the calls came.
type heldLister struct {
	mu      sync.Mutex
	calls   int
	arrived chan int                 // the call's number, 1 first
	answers map[int]chan []ModelInfo // released per call
}

func newHeldLister() *heldLister {
	return &heldLister{arrived: make(chan int, 8), answers: map[int]chan []ModelInfo{}}
}

func (l *heldLister) slot(n int) chan []ModelInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.answers[n] == nil {
		l.answers[n] = make(chan []ModelInfo, 1)
	}
	return l.answers[n]
}

func (l *heldLister) ListModels(ctx context.Context) ([]ModelInfo, error) {
	l.mu.Lock()
	l.calls++
	n := l.calls
	l.mu.Unlock()
	ch := l.slot(n)
	l.arrived <- n
	select {
	case m := <-ch:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestRefetchNewestWins: of two refetches in flight, the older one's
// late answer does not overwrite the newer one's list.
func TestRefetchNewestWins(t *testing.T) {
	l := newHeldLister()
	m := NewModelList(l, 0, nil)
	defer m.Close()
	m.Start()
	<-l.arrived
	l.slot(1) <- []ModelInfo{{ID: "first"}}
	<-m.Done()
	thens := make(chan struct{}, 2)
	m.Refetch(func() { thens <- struct{}{} })
	<-l.arrived
	m.Refetch(func() { thens <- struct{}{} })
	<-l.arrived
	l.slot(3) <- []ModelInfo{{ID: "newest"}}
	<-thens
	l.slot(2) <- []ModelInfo{{ID: "older"}}
	<-thens
	if got, ok := m.Models(); !ok || len(got) != 1 || got[0].ID != "newest" {
		t.Errorf("models %+v, %v; want the newest request's", got, ok)
	}
}

// TestRefetchFirstRequest: a Refetch on a list never started sends one
// request, not two, and its answer closes Done.
func TestRefetchFirstRequest(t *testing.T) {
	l := newHeldLister()
	m := NewModelList(l, 0, nil)
	done := make(chan struct{})
	m.Refetch(func() { close(done) })
	<-l.arrived
	l.slot(1) <- []ModelInfo{{ID: "a"}}
	<-done
	<-m.Done()
	m.Start() // already started: no second request
	m.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls != 1 {
		t.Errorf("%d requests, want 1", l.calls)
	}
}

// TestCloseWaitsForRefetch: Close ends a request under way and returns
// only once its goroutine has; its callback never runs.
func TestCloseWaitsForRefetch(t *testing.T) {
	l := newHeldLister()
	m := NewModelList(l, 0, nil)
	m.Start()
	<-l.arrived
	l.slot(1) <- nil
	<-m.Done()
	called := false
	m.Refetch(func() { called = true })
	<-l.arrived
	m.Close()
	// Close waited for the goroutine, so reading called is race-free.
	if called {
		t.Error("the abandoned refetch's callback ran")
	}
}
