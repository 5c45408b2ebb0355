package session

import (
	"sync"
	"time"
)

// Sink receives every event of a session, transient ones included, in
// the order they happen. It runs on the emitting goroutine and must not
// block for long (the bridge writes the updates to the editor).
type Sink func(Event)

// Store keeps a session's logged events in memory and passes every event
// to its sink. Logged events get contiguous Seq numbers from 0; transient
// events get Seq -1 and are not kept. A Store is safe for concurrent use;
// Emit calls are serialised, so the sink sees events in Seq order.
type Store struct {
	mu     sync.Mutex
	events []Event
	sink   Sink
	now    func() time.Time
}

// NewStore returns an empty store that passes events to sink (which may
// be nil).
func NewStore(sink Sink) *Store {
	return &Store{sink: sink, now: time.Now}
}

// SetSink replaces the sink (e.g. when an editor reconnects).
func (s *Store) SetSink(sink Sink) {
	s.mu.Lock()
	s.sink = sink
	s.mu.Unlock()
}

// Emit records d (unless it is transient) and passes it to the sink.
// It returns the event as recorded.
func (s *Store) Emit(d Data) Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := Event{Seq: -1, Time: s.now().UnixMilli(), Data: d}
	if !d.Transient() {
		ev.Seq = int64(len(s.events))
		s.events = append(s.events, ev)
	}
	if s.sink != nil {
		s.sink(ev)
	}
	return ev
}

// Events returns a copy of the logged events, oldest first.
func (s *Store) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}
