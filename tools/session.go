package tools

import "sync"

// Session is the per-session state a tool may use, for example the file
// versions it has observed. The bridge implements it; NewSession gives a
// simple in-memory one.
type Session interface {
	// ID is the session id.
	ID() string
	// Cwd is the session's absolute working directory.
	Cwd() string
	// Value returns the value stored under key (a comparable value, best an
	// unexported type of the calling package), first storing init() there if
	// the key is absent. init runs at most once per key; a nil init only
	// looks the key up and returns nil when absent.
	Value(key any, init func() any) any
}

// NewSession returns a goroutine-safe in-memory Session with the given id and
// cwd. An init function passed to Value must not call Value with the same
// key (it would deadlock); other keys are fine.
func NewSession(id, cwd string) Session {
	return &memSession{id: id, cwd: cwd, vals: map[any]*memEntry{}}
}

type memSession struct {
	id, cwd string
	mu      sync.Mutex
	vals    map[any]*memEntry
}

type memEntry struct {
	done chan struct{} // closed once val is set
	val  any
}

func (s *memSession) ID() string  { return s.id }
func (s *memSession) Cwd() string { return s.cwd }

func (s *memSession) Value(key any, init func() any) any {
	s.mu.Lock()
	e, ok := s.vals[key]
	if !ok {
		if init == nil {
			s.mu.Unlock()
			return nil
		}
		e = &memEntry{done: make(chan struct{})}
		s.vals[key] = e
	}
	s.mu.Unlock()
	if !ok {
		// This caller created the entry, so it runs init; a panicking init
		// leaves nil stored and still releases the waiters.
		defer close(e.done)
		e.val = init()
		return e.val
	}
	<-e.done
	return e.val
}

type closersKey struct{}

type closers struct {
	mu   sync.Mutex
	fs   []func()
	done bool
}

// OnClose registers f to run when the session closes (CloseSession); when
// it is already closed, f runs at once.
func OnClose(s Session, f func()) {
	if s == nil {
		return
	}
	c := s.Value(closersKey{}, func() any { return &closers{} }).(*closers)
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		f()
		return
	}
	c.fs = append(c.fs, f)
	c.mu.Unlock()
}

// CloseSession runs the functions registered with OnClose, newest first,
// once; the bridge calls it on session/close.
func CloseSession(s Session) {
	if s == nil {
		return
	}
	c := s.Value(closersKey{}, func() any { return &closers{} }).(*closers)
	c.mu.Lock()
	fs := c.fs
	c.fs, c.done = nil, true
	c.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
