package toolbash

import (
	"os"
	"sync"
	"time"
	"unicode/utf8"
)

// Live view limits (Zed's `_meta.terminal_output` updates): at most one
// report per LiveInterval, at most LiveChunk bytes per report, at most
// LiveCap bytes per command (then one line says what was not shown).
const (
	LiveInterval = 50 * time.Millisecond
	LiveChunk    = 256 << 10
	LiveCap      = 16 << 20
)

// liveView coalesces a command's output into reports. The readers add
// bytes (never blocking on the reports); one goroutine, run, reports them.
// Only whole UTF-8 characters are reported: a character split across two
// reads of a stream is carried whole into the next report; invalid bytes
// are passed on (Report makes them U+FFFD).
type liveView struct {
	report   func(string)
	interval time.Duration
	chunk    int
	cap      int64

	mu       sync.Mutex
	queue    backlog // output not yet reported
	partial  [2][]byte
	accepted int64 // bytes taken into the view (<= cap)
	hidden   int64 // bytes not shown because of cap
	finished bool  // no more output; trailer is the last text
	trailer  string
	lastByte byte   // the last byte reported, 0 before any
	scratch  []byte // take's buffer

	wake chan struct{} // a token when there is something to do

	// reportMu is held around each report; aborted (under it) forbids
	// further reports.
	reportMu sync.Mutex
	aborted  bool

	stopOnce sync.Once
	stop     chan struct{} // closed by abort
	done     chan struct{} // closed when run returns
}

// newLiveView returns a live view reporting through report; overflow, when
// not nil, creates the file that holds unreported output beyond
// liveMemory bytes.
func newLiveView(report func(string), overflow func() (*os.File, error)) *liveView {
	return &liveView{report: report, interval: LiveInterval, chunk: LiveChunk, cap: LiveCap,
		queue: backlog{block: LiveChunk, memLimit: liveMemory, open: overflow},
		wake:  make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
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
	lv.signal()
}

// eof marks the end of stream i: bytes carried for it are passed on as
// they are.
func (lv *liveView) eof(i int) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if len(lv.partial[i]) > 0 {
		lv.accept(lv.partial[i])
		lv.partial[i] = nil
		lv.signal()
	}
}

// accept queues b within the cap; the rest, and everything after it,
// counts as hidden.
func (lv *liveView) accept(b []byte) {
	if len(b) == 0 {
		return
	}
	if lv.hidden > 0 {
		lv.hidden += int64(len(b))
		return
	}
	room := lv.cap - lv.accepted
	if int64(len(b)) > room {
		n := cutBack(b, int(room))
		lv.hidden += int64(len(b) - n)
		b = b[:n]
	}
	kept := lv.queue.push(b)
	lv.accepted += int64(kept)
	lv.hidden += int64(len(b) - kept)
}

// hiddenBytes returns how many bytes the cap kept out of the view.
func (lv *liveView) hiddenBytes() int64 {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	return lv.hidden
}

// finish says the output has ended (the readers are done); trailer, when
// not empty, is reported after the output, on a line of its own. run then
// reports what is pending and returns.
func (lv *liveView) finish(trailer string) {
	lv.mu.Lock()
	lv.finished, lv.trailer = true, trailer
	lv.mu.Unlock()
	lv.signal()
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

// run reports the output until finish's output is all reported or abort.
// The first output after a quiet spell is reported at once; then at most
// one report per interval.
func (lv *liveView) run() {
	defer close(lv.done)
	defer func() {
		lv.mu.Lock()
		lv.queue.close()
		lv.mu.Unlock()
	}()
	var last time.Time
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		lv.mu.Lock()
		work := lv.queue.pending() > 0 || (lv.finished && lv.trailer != "")
		finished := lv.finished
		lv.mu.Unlock()
		if !work {
			if finished {
				return
			}
			select {
			case <-lv.wake:
				continue
			case <-lv.stop:
				return
			}
		}
		if wait := lv.interval - time.Since(last); !last.IsZero() && wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-timer.C:
			case <-lv.stop:
				return
			}
		}
		text := lv.take()
		if text == "" {
			continue
		}
		lv.reportMu.Lock()
		if lv.aborted {
			lv.reportMu.Unlock()
			return
		}
		lv.report(text)
		lv.reportMu.Unlock()
		last = time.Now()
	}
}

// take removes the next report's text: up to chunk bytes of pending output
// (not splitting a character), then the trailer when it fits.
func (lv *liveView) take() string {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	n := min(lv.queue.pending(), lv.chunk)
	buf := lv.queue.peek(lv.scratch[:0], n+1)
	if len(buf) > n {
		if !utf8.RuneStart(buf[n]) {
			// The next byte continues a character: leave it whole.
			for i := n - 1; i > 0 && i >= n-3; i-- {
				if utf8.RuneStart(buf[i]) {
					n = i
					break
				}
			}
		}
		buf = buf[:n]
	}
	n = len(buf)
	lv.queue.consume(n)
	if lv.queue.pending() == 0 && lv.finished && lv.trailer != "" {
		last := lv.lastByte
		if len(buf) > 0 {
			last = buf[len(buf)-1]
		}
		t := lv.trailer
		if last != 0 && last != '\n' {
			t = "\n" + t
		}
		if len(buf)+len(t) <= lv.chunk || len(buf) == 0 {
			buf = append(buf, t...)
			lv.trailer = ""
		}
	}
	if len(buf) > 0 {
		lv.lastByte = buf[len(buf)-1]
	}
	lv.scratch = buf[:0]
	return string(buf)
}
