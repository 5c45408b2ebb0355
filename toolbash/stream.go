package toolbash

import (
	"os"
	"sync"
)

// TailBytes is how much of each output stream a command keeps in memory:
// its last 64,000 bytes, cut at a character boundary when it was cut.
const TailBytes = 64000

// spillFunc creates the spill file of one stream ("stdout" or "stderr"):
// an exclusive, owner-only file, and its path.
type spillFunc func(stream string) (*os.File, string, error)

// stream captures one output stream of a command: the last limit bytes in
// memory and, from the first time the output outgrows that, all of it in a
// spill file. One goroutine writes (the reader); any may read.
type stream struct {
	name  string
	limit int
	spill spillFunc

	mu      sync.Mutex
	tail    tailBuf
	total   int64    // bytes written so far
	readPos int64    // total at the last read (background reads)
	file    *os.File // the spill file, nil before the first overflow or on failure
	path    string   // the spill file's path; "" when there is none (or it failed)
	failed  bool     // the spill file could not be created or written
	closed  bool     // the stream reached its end
}

func newStream(name string, limit int, spill spillFunc) *stream {
	return &stream{name: name, limit: limit, spill: spill, tail: tailBuf{limit: limit}}
}

// write records p (the reader calls it for each chunk read).
func (s *stream) write(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil && !s.failed && s.total+int64(len(p)) > int64(s.limit) {
		s.openSpill()
	}
	if s.file != nil {
		if _, err := s.file.Write(p); err != nil {
			s.dropSpill()
		}
	}
	s.total += int64(len(p))
	s.tail.write(p)
}

// openSpill creates the spill file and writes the output so far (all of
// it is still in memory: this is the first overflow).
func (s *stream) openSpill() {
	if s.spill == nil {
		s.failed = true
		return
	}
	f, path, err := s.spill(s.name)
	if err != nil {
		s.failed = true
		return
	}
	s.file, s.path = f, path
	if _, err := f.Write(s.tail.bytes()); err != nil {
		s.dropSpill()
	}
}

// dropSpill gives up on an incomplete spill file.
func (s *stream) dropSpill() {
	_ = s.file.Close()
	s.file, s.path, s.failed = nil, "", true
}

// close marks the end of the stream and closes the spill file.
func (s *stream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.file != nil {
		if err := s.file.Close(); err != nil {
			s.path, s.failed = "", true
		}
		s.file = nil
	}
}

// result returns what a foreground result shows of the stream: its tail
// (starting at a character boundary when cut), whether output was cut, and
// the spill file's path ("" when unavailable).
func (s *stream) result() (text []byte, cut bool, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.tail.bytes()
	cut = s.total > int64(len(b))
	if cut {
		b = b[runeStartSkip(b):]
	}
	return append([]byte(nil), b...), cut, s.path
}

// readNew returns the output written since the previous readNew (a
// background task's delta) and whether part of it was no longer in memory.
// While the stream is open, a character whose last bytes have not arrived
// is left for the next read.
func (s *stream) readNew() (delta []byte, dropped bool, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.tail.bytes()
	hold := 0
	if !s.closed {
		hold = incompleteSuffix(b)
	}
	unread := s.total - s.readPos
	end := len(b) - hold
	switch {
	case unread > int64(len(b)):
		dropped = true
		delta = b[:end]
		delta = delta[runeStartSkip(delta):]
	case unread > int64(hold):
		delta = b[len(b)-int(unread) : end]
	}
	if unread > int64(hold) {
		s.readPos = s.total - int64(hold)
	}
	return append([]byte(nil), delta...), dropped, s.path
}

// spillPath returns the spill file's path, "" when there is none.
func (s *stream) spillPath() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path
}

// tailBuf keeps the last limit bytes written to it, in a buffer of at most
// twice that (compacted when full).
type tailBuf struct {
	limit int
	b     []byte
}

func (t *tailBuf) write(p []byte) {
	if len(p) >= t.limit {
		t.b = append(t.b[:0], p[len(p)-t.limit:]...)
		return
	}
	if len(t.b)+len(p) > 2*t.limit {
		keep := min(len(t.b), t.limit-len(p))
		n := copy(t.b, t.b[len(t.b)-keep:])
		t.b = t.b[:n]
	}
	if len(t.b)+len(p) > cap(t.b) {
		nb := make([]byte, len(t.b), min(2*t.limit, max(2*cap(t.b), len(t.b)+len(p), 4096)))
		copy(nb, t.b)
		t.b = nb
	}
	t.b = append(t.b, p...)
}

// bytes returns the last limit bytes (aliasing the buffer).
func (t *tailBuf) bytes() []byte {
	if len(t.b) > t.limit {
		return t.b[len(t.b)-t.limit:]
	}
	return t.b
}
