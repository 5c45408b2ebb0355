package toolbash

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

// TailBytes is how much of each output stream a command keeps in memory:
// its last 64,000 bytes, cut at a character boundary when it was cut.
const TailBytes = 64000

// DefaultSpillMax is how many bytes of output one command may write to
// its spill files, both streams together, unless Options.SpillMax says
// otherwise: 64 MiB. Past it the output is still read (and its tail
// kept), but no longer saved: the spill file ends with a line saying
// where it was cut, and the result says the file holds only the start.
const DefaultSpillMax = 64 << 20

// spillBudget is what is left of one command's DefaultSpillMax (or
// Options.SpillMax), shared by its two streams; nil means no limit.
type spillBudget = atomic.Int64

// spillFunc creates the spill file of one stream ("stdout" or "stderr"):
// an exclusive, owner-only file, and its path.
type spillFunc func(stream string) (*os.File, string, error)

// stream captures one output stream of a command: the last limit bytes in
// memory and, from the first time the output outgrows that, all of it in a
// spill file. One goroutine writes (the reader); any may read.
type stream struct {
	name   string
	limit  int
	spill  spillFunc
	budget *spillBudget // nil: the spill file takes all of the output

	mu      sync.Mutex
	tail    tailBuf
	total   int64    // bytes written so far
	readPos int64    // total at the last read (background reads)
	file    *os.File // the spill file, nil before the first overflow or on failure
	path    string   // the spill file's path; "" when there is none (or it failed)
	failed  bool     // the spill file could not be created or written
	closed  bool     // the stream reached its end
	saved   int64    // bytes in the spill file
	cut     bool     // the budget ran out: the file holds only the start
}

// newStream returns the capture of one stream keeping limit bytes in
// memory, spilling through spill (nil: no spill file) within budget
// (nil: no limit).
func newStream(name string, limit int, spill spillFunc, budget *spillBudget) *stream {
	return &stream{name: name, limit: limit, spill: spill, budget: budget, tail: tailBuf{limit: limit}}
}

// write records p (the reader calls it for each chunk read).
func (s *stream) write(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil && !s.failed && s.total+int64(len(p)) > int64(s.limit) {
		s.openSpill()
	}
	if s.file != nil && !s.cut {
		s.save(p)
	}
	s.total += int64(len(p))
	s.tail.write(p)
}

// save writes p to the spill file, as much as the budget allows (the
// file is written once, never read back: the tail is in memory).
func (s *stream) save(p []byte) {
	n := len(p)
	if s.budget != nil {
		left := s.budget.Add(-int64(n))
		if left < 0 {
			n = max(0, n+int(left))
			s.budget.Add(int64(len(p) - n)) // what it did not use
			s.cut = true
		}
	}
	if _, err := s.file.Write(p[:n]); err != nil {
		s.dropSpill()
		return
	}
	s.saved += int64(n)
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
	s.save(s.tail.bytes())
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
		if s.cut {
			_, _ = s.file.WriteString(cutLine(s.saved, s.total))
		}
		if err := s.file.Close(); err != nil {
			s.path, s.failed = "", true
		}
		s.file = nil
	}
}

// cutLine ends a spill file cut short: where, and how much more there was.
func cutLine(saved, total int64) string {
	return "\n[dsh-acp: the output was cut here, after its first " + strconv.FormatInt(saved, 10) +
		" bytes (the spill limit per command, --max-spill-size); " + strconv.FormatInt(total-saved, 10) + " more bytes were not saved]\n"
}

// result returns what a foreground result shows of the stream: its tail
// (starting at a character boundary when cut), whether output was cut, the
// spill file's path ("" when unavailable) and, when the spill limit cut
// that file short, how many bytes it holds (else 0).
func (s *stream) result() (text []byte, cut bool, path string, saved int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.tail.bytes()
	cut = s.total > int64(len(b))
	if cut {
		b = b[runeStartSkip(b):]
	}
	if s.cut && s.path != "" {
		saved = s.saved
	}
	return append([]byte(nil), b...), cut, s.path, saved
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
