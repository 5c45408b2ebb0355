package session

import (
	"sync"
	"time"
)

// Sink receives every event of a session, transient ones included, in
// the order they happen, one call at a time. It runs on the emitting
// goroutine outside the store's lock, so it may read the store; a slow
// sink (the bridge writing updates to an editor that reads slowly) holds
// up the Emits after it, never the store's readers.
type Sink func(Event)

// Store keeps a session's logged events in memory, appends them to the
// session's Log when it has one, and passes every event to its sink.
// Logged events get contiguous Seq numbers from 0; transient events get
// Seq -1 and are neither kept nor logged. A Store is safe for concurrent
// use; Emit calls are serialised, so the log and the sink see events in
// Seq order.
type Store struct {
	// Sink calls go in ticket order: Emit takes a ticket under mu (with
	// the event's Seq, so ticket order is Seq order), lets go of mu, and
	// waits under sinkMu for its turn.
	sinkMu   sync.Mutex
	sinkTurn sync.Cond // L is &sinkMu, set at the first Emit
	turn     uint64    // the ticket whose sink call is next (sinkMu)
	tickets  uint64    // the next ticket to hand out (mu)

	mu     sync.Mutex
	events []Event
	sink   Sink
	now    func() time.Time
	log    *Log
	// pending, when set, decodes the events of a lazily read log (see
	// Loaded.NewStore); n is the number of logged events (those of the
	// log, then tail, the ones emitted before the decode), err the
	// decode's failure.
	pending func() ([]Event, error)
	n       int
	tail    []Event
	err     error
}

// ensure decodes the pending events, once (s.mu held). On failure the
// store keeps no events and logs nothing more: err says why.
func (s *Store) ensure() {
	if s.pending == nil {
		return
	}
	events, err := s.pending()
	s.pending = nil
	if err != nil {
		s.err, s.tail = err, nil
		return
	}
	s.events, s.tail = append(events, s.tail...), nil
}

// Ready decodes the events of a lazily read log if that has not happened
// yet, and returns why that failed (a *CorruptError), or nil. After a
// failure the store logs nothing: events are only passed to the sink.
func (s *Store) Ready() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensure()
	return s.err
}

// Len returns the number of logged events, without decoding a lazily
// read log.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending != nil {
		return s.n
	}
	return len(s.events)
}

// NewStore returns an empty in-memory store that passes events to sink
// (which may be nil).
func NewStore(sink Sink) *Store {
	return &Store{sink: sink, now: time.Now}
}

// NewLoggedStore returns a store that already holds events (Seq 0..n-1,
// e.g. a loaded log) and appends every new logged event to log (nil: in
// memory only). The store owns events from then on.
func NewLoggedStore(events []Event, log *Log, sink Sink) *Store {
	return &Store{events: events, sink: sink, now: time.Now, log: log}
}

// SetSink replaces the sink (e.g. when an editor reconnects).
func (s *Store) SetSink(sink Sink) {
	s.mu.Lock()
	s.sink = sink
	s.mu.Unlock()
}

// Emit records d (unless it is transient, or the events of a lazily
// read log could not be decoded: see Ready), appends it to the log, and
// passes it to the sink. It returns the event as recorded. A log write
// error does not stop the session: it is kept by the Log and returned by
// Flush.
func (s *Store) Emit(d Data) Event {
	s.mu.Lock()
	ev := Event{Seq: -1, Time: s.now().UnixMilli(), Data: d}
	switch {
	case d.Transient() || s.err != nil:
	case s.pending != nil:
		// The log's events are not decoded yet: this one follows them.
		ev.Seq = int64(s.n)
		s.n++
		s.tail = append(s.tail, ev)
	default:
		ev.Seq = int64(len(s.events))
		s.events = append(s.events, ev)
	}
	if ev.Seq >= 0 && s.log != nil {
		_ = s.log.Append(ev)
	}
	sink, ticket := s.sink, s.tickets
	s.tickets++
	s.mu.Unlock()

	s.sinkMu.Lock()
	defer func() {
		// The next ticket's turn, even when the sink panicked.
		s.turn++
		s.sinkTurn.Broadcast()
		s.sinkMu.Unlock()
	}()
	if s.sinkTurn.L == nil {
		s.sinkTurn.L = &s.sinkMu
	}
	for s.turn != ticket {
		s.sinkTurn.Wait()
	}
	if sink != nil {
		sink(ev)
	}
	return ev
}

// Events returns a copy of the logged events, oldest first (decoding a
// lazily read log first; nil when that fails, see Ready).
func (s *Store) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensure()
	return append([]Event(nil), s.events...)
}

// EventsFrom returns a copy of the logged events from Seq from on
// (none when from is past the last), oldest first, and the number of
// logged events (decoding a lazily read log first; nothing and 0 when
// that fails, see Ready). A reader that keeps what it has read resumes
// with from set to the count it was last given.
func (s *Store) EventsFrom(from int) ([]Event, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensure()
	n := len(s.events)
	if from >= n {
		return nil, n
	}
	return append([]Event(nil), s.events[max(from, 0):]...), n
}

// Backward calls f with the logged events from the newest to the oldest
// until f returns false, without copying them (decoding a lazily read
// log first); f runs with the store locked and must not call it.
func (s *Store) Backward(f func(Event) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensure()
	for i := len(s.events) - 1; i >= 0; i-- {
		if !f(s.events[i]) {
			return
		}
	}
}

// Log returns the store's log, nil for an in-memory store.
func (s *Store) Log() *Log { return s.log }

// Flush makes every logged event durable (Log.Sync) and returns the
// log's first write error, if any. Without a log it does nothing.
func (s *Store) Flush() error {
	if s.log == nil {
		return nil
	}
	return s.log.Sync()
}

// Close flushes and closes the log (later events are kept in memory
// only). Without a log it does nothing; closing twice is harmless.
func (s *Store) Close() error {
	if s.log == nil {
		return nil
	}
	return s.log.Close()
}
