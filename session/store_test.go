package session

import (
	"sync"
	"testing"
)

// TestSinkOutsideLock: a sink that is still busy with one event does not
// hold up the store's readers (Len, Events, EventsFrom; it may even read
// the store itself), and
// sink calls of concurrent Emits arrive one at a time in Seq order.
func TestSinkOutsideLock(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var seqs []int64
	inSink := 0
	var s *Store
	s = NewStore(func(ev Event) {
		mu.Lock()
		inSink++
		if inSink > 1 {
			t.Errorf("two sink calls at once")
		}
		mu.Unlock()
		if ev.Seq == 0 {
			close(entered)
			<-release
			_ = s.Len() // a sink may read the store
			if got, n := s.EventsFrom(0); len(got) < 1 || n < 1 {
				t.Errorf("EventsFrom in the sink = %d events, %d", len(got), n)
			}
		}
		mu.Lock()
		seqs = append(seqs, ev.Seq)
		inSink--
		mu.Unlock()
	})
	done := make(chan struct{})
	go func() { s.Emit(UserMessage{Turn: 1}); close(done) }()
	<-entered
	// The sink holds event 0: the store still answers.
	if n := s.Len(); n != 1 {
		t.Errorf("Len = %d while the sink is busy, want 1", n)
	}
	if evs := s.Events(); len(evs) != 1 {
		t.Errorf("Events has %d events while the sink is busy, want 1", len(evs))
	}
	if evs, n := s.EventsFrom(0); len(evs) != 1 || evs[0].Seq != 0 || n != 1 {
		t.Errorf("EventsFrom(0) = %+v, %d while the sink is busy, want event 0 and 1", evs, n)
	}
	if evs, n := s.EventsFrom(1); evs != nil || n != 1 {
		t.Errorf("EventsFrom(1) = %+v, %d, want none and 1", evs, n)
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() { defer wg.Done(); s.Emit(UserMessage{Turn: 1}) }()
	}
	close(release)
	<-done
	wg.Wait()
	if len(seqs) != 51 {
		t.Fatalf("the sink saw %d events, want 51", len(seqs))
	}
	for i, q := range seqs {
		if q != int64(i) {
			t.Fatalf("the sink saw Seq %v, want 0..50 in order", seqs)
		}
	}
}
