package toolbash

import (
	"bytes"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Live view limits. A foreground command's output (both streams
// interleaved as they were read) is reported as it comes: at most one
// report per LiveInterval while the command runs (the first output after
// a quiet spell at once), at most LiveChunk bytes each. A card gets at most
// LiveCap bytes of the program's output in all: the first LiveCap-LiveTail
// bytes as they come; then the reports pause, and when the command has
// ended its last LiveTail bytes follow, after one Note saying how much was
// left out between the two parts and where the full output is. So a card
// ends with the output the model gets (the last TailBytes of each stream:
// LiveTail holds both unless one stream printed more than
// LiveTail-TailBytes bytes after the other's tail began). Once the command
// has exited and its output is drained, whatever is left is reported at
// once, with no pacing. The Notes (the truncation line, a timeout) are
// extra: they are not program output and do not count against LiveCap.
const (
	LiveInterval = 50 * time.Millisecond
	LiveChunk    = 256 << 10
	LiveCap      = 1 << 20
	LiveTail     = LiveCap / 4
)

// liveView coalesces a command's output into reports. The readers add
// bytes (never blocking on the reports); one goroutine, run, reports them.
// Only whole UTF-8 characters are reported: a character split across two
// reads of a stream is carried whole into the next report; invalid bytes
// are passed on (Report makes them U+FFFD). It holds at most about LiveCap
// bytes of output: what is waiting to be reported (the first part, at most
// the budget) and the last part (tail).
type liveView struct {
	report   func(tools.Progress)
	interval time.Duration
	chunk    int
	budget   int // output bytes reported as they come: the cap less the tail

	mu       sync.Mutex
	queue    []byte // output not yet reported: queue[head:]
	head     int
	partial  [2][]byte
	taken    int     // bytes queued while the command ran (<= budget)
	past     int64   // bytes that came after the budget was used
	tail     tailBuf // the last of those (a quarter of the cap)
	finished bool
	end      []tools.Progress // reported after the queue, once finished

	wake chan struct{} // a token when output was queued
	fin  chan struct{} // closed by finish

	// reportMu is held around each report; aborted (under it) forbids
	// further reports.
	reportMu sync.Mutex
	aborted  bool

	finOnce  sync.Once
	stopOnce sync.Once
	stop     chan struct{} // closed by abort
	done     chan struct{} // closed when run returns
}

// newLiveView returns a live view reporting through report, which shows
// at most limit bytes of output (LiveCap; smaller in tests): the first
// three quarters as they come, the last quarter at the end.
func newLiveView(report func(tools.Progress), limit int64) *liveView {
	tail := int(limit / 4)
	return &liveView{report: report, interval: LiveInterval, chunk: LiveChunk, budget: int(limit) - tail,
		tail: tailBuf{limit: tail},
		wake: make(chan struct{}, 1), fin: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
}

func (lv *liveView) signal() {
	select {
	case lv.wake <- struct{}{}:
	default:
	}
}

// add takes p, read from stream i (0 stdout, 1 stderr). It never blocks
// for long.
func (lv *liveView) add(i int, p []byte) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if lv.finished || lv.isStopped() {
		return
	}
	if len(lv.partial[i]) > 0 {
		if len(p) < 4 {
			// Short: join the carried bytes and p, and look again.
			p = append(lv.partial[i], p...)
			lv.partial[i] = nil
		} else {
			lv.accept(lv.partial[i])
			lv.partial[i] = nil
		}
	}
	n := incompleteSuffix(p)
	lv.accept(p[:len(p)-n])
	if n > 0 {
		lv.partial[i] = append(lv.partial[i][:0:0], p[len(p)-n:]...)
	}
}

// eof marks the end of stream i: bytes carried for it are passed on as
// they are.
func (lv *liveView) eof(i int) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if len(lv.partial[i]) > 0 && !lv.finished {
		lv.accept(lv.partial[i])
		lv.partial[i] = nil
	}
}

// accept queues b within the budget (not splitting a character); the
// rest, and everything after it, goes to the tail.
func (lv *liveView) accept(b []byte) {
	if len(b) == 0 {
		return
	}
	if lv.past == 0 {
		n := len(b)
		if room := lv.budget - lv.taken; n > room {
			n = cutBack(b, room)
		}
		if n > 0 {
			lv.queue = append(lv.queue, b[:n]...)
			lv.taken += n
			b = b[n:]
			lv.signal()
		}
	}
	if len(b) > 0 {
		lv.past += int64(len(b))
		lv.tail.write(b)
	}
}

// finish says the output has ended (the readers are done). What is still
// queued is reported at once; then, when output came after the budget was
// used, its last part (all of it when it fits, else a Note of how much was
// left out, with the spill files' paths, and the last part from a line
// start); then each of notes as a Note. run then returns.
func (lv *liveView) finish(paths []string, notes []string) {
	lv.mu.Lock()
	if !lv.finished {
		lv.finished = true
		rest := lv.tail.bytes()
		if lv.past > int64(len(rest)) {
			rest = rest[tailStart(rest):]
			omitted := lv.past - int64(len(rest))
			lv.end = append(lv.end, tools.Progress{Note: omittedLine(int64(lv.budget+lv.tail.limit), omitted, paths)})
			for len(rest) > 0 {
				n := cutBack(rest, lv.chunk)
				if n == 0 {
					n = min(len(rest), lv.chunk)
				}
				lv.end = append(lv.end, tools.Progress{Output: string(rest[:n])})
				rest = rest[n:]
			}
		} else {
			lv.queue = append(lv.queue, rest...)
		}
		lv.tail = tailBuf{}
		for _, n := range notes {
			lv.end = append(lv.end, tools.Progress{Note: n})
		}
	}
	lv.mu.Unlock()
	lv.finOnce.Do(func() { close(lv.fin) })
}

// tailStart is where the shown part of the tail b begins: after its first
// line break when that is near the start (so the part starts on a line of
// its own), else at its first character boundary.
func tailStart(b []byte) int {
	if i := bytes.IndexByte(b[:min(len(b), 4096)], '\n'); i >= 0 && i+1 < len(b) {
		return i + 1
	}
	return runeStartSkip(b)
}

// abort stops the reports at once: when abort returns, no report is in
// progress and none will be made.
func (lv *liveView) abort() {
	lv.reportMu.Lock()
	lv.aborted = true
	lv.reportMu.Unlock()
	lv.stopOnce.Do(func() { close(lv.stop) })
}

func (lv *liveView) isStopped() bool {
	select {
	case <-lv.stop:
		return true
	default:
		return false
	}
}

// send makes one report unless the view was aborted; it reports whether
// it did.
func (lv *liveView) send(p tools.Progress) bool {
	lv.reportMu.Lock()
	defer lv.reportMu.Unlock()
	if lv.aborted {
		return false
	}
	lv.report(p)
	return true
}

// run reports the output until finish's output is all reported or abort.
// While the command runs, the first output after a quiet spell is
// reported at once, then at most one report per interval; after finish,
// everything left is reported back to back.
func (lv *liveView) run() {
	defer close(lv.done)
	var last time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		lv.mu.Lock()
		pending := len(lv.queue) - lv.head
		finished := lv.finished
		lv.mu.Unlock()
		if pending == 0 {
			if finished {
				lv.reportEnd()
				return
			}
			select {
			case <-lv.wake:
			case <-lv.fin:
			case <-lv.stop:
				return
			}
			continue
		}
		if wait := lv.interval - time.Since(last); !finished && !last.IsZero() && wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-lv.fin:
				timer.Stop()
			case <-lv.stop:
				return
			}
		}
		text := lv.take()
		if text == "" {
			continue
		}
		if !lv.send(tools.Progress{Output: text}) {
			return
		}
		last = time.Now()
	}
}

// reportEnd makes the reports finish prepared.
func (lv *liveView) reportEnd() {
	lv.mu.Lock()
	end := lv.end
	lv.end = nil
	lv.mu.Unlock()
	for _, p := range end {
		if !lv.send(p) {
			return
		}
	}
}

// take removes the next report's text: up to chunk bytes of queued output,
// not splitting a character.
func (lv *liveView) take() string {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	q := lv.queue[lv.head:]
	n := min(len(q), lv.chunk)
	if n < len(q) && !utf8.RuneStart(q[n]) {
		// The next byte continues a character: leave it whole.
		if k := cutBack(q, n); k > 0 {
			n = k
		}
	}
	text := string(q[:n])
	lv.head += n
	if lv.head == len(lv.queue) {
		lv.queue, lv.head = lv.queue[:0], 0
	}
	return text
}
