package toolbash

import (
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
	blocks   [][]byte // pending output, each block at most chunk bytes
	head     int      // bytes of blocks[0] already reported
	pending  int      // bytes not yet reported
	partial  [2][]byte
	accepted int64 // bytes taken into the view (<= cap)
	hidden   int64 // bytes not shown because of cap
	finished bool  // no more output; trailer is the last text
	trailer  string
	lastByte byte // the last byte reported, 0 before any
	free     [][]byte

	wake chan struct{} // a token when there is something to do

	// reportMu is held around each report; aborted (under it) forbids
	// further reports.
	reportMu sync.Mutex
	aborted  bool

	stopOnce sync.Once
	stop     chan struct{} // closed by abort
	done     chan struct{} // closed when run returns
}

func newLiveView(report func(string)) *liveView {
	return &liveView{report: report, interval: LiveInterval, chunk: LiveChunk, cap: LiveCap,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
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
	lv.accepted += int64(len(b))
	lv.pending += len(b)
	for len(b) > 0 {
		if len(lv.blocks) == 0 || len(lv.blocks[len(lv.blocks)-1]) == lv.chunk {
			lv.blocks = append(lv.blocks, lv.newBlock())
		}
		last := &lv.blocks[len(lv.blocks)-1]
		n := min(len(b), lv.chunk-len(*last))
		*last = append(*last, b[:n]...)
		b = b[n:]
	}
}

func (lv *liveView) newBlock() []byte {
	if n := len(lv.free); n > 0 {
		b := lv.free[n-1]
		lv.free = lv.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, lv.chunk)
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
	var last time.Time
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		lv.mu.Lock()
		work := lv.pending > 0 || (lv.finished && lv.trailer != "")
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
	n := min(lv.pending, lv.chunk)
	buf := make([]byte, 0, n)
	for len(buf) < n {
		b := lv.blocks[0][lv.head:]
		k := min(len(b), n-len(buf))
		buf = append(buf, b[:k]...)
		lv.consume(k)
	}
	if lv.pending > 0 && !utf8.RuneStart(lv.blocks[0][lv.head]) {
		// The next byte continues a character: give its first bytes back.
		for i := len(buf) - 1; i > 0 && i >= len(buf)-3; i-- {
			if utf8.RuneStart(buf[i]) {
				lv.unconsume(buf[i:])
				buf = buf[:i]
				break
			}
		}
	}
	if lv.pending == 0 && lv.finished && lv.trailer != "" {
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
	return string(buf)
}

// consume drops k reported bytes from the front of the queue.
func (lv *liveView) consume(k int) {
	lv.head += k
	lv.pending -= k
	if lv.head == len(lv.blocks[0]) {
		if len(lv.free) < 2 {
			lv.free = append(lv.free, lv.blocks[0])
		}
		lv.blocks[0] = nil
		lv.blocks = lv.blocks[1:]
		lv.head = 0
	}
}

// unconsume puts b (the end of what was just taken) back at the front.
// The bytes of b still in blocks[0] (before head) are reused; the others
// (from a block already released) go into a new block in front.
func (lv *liveView) unconsume(b []byte) {
	lv.pending += len(b)
	if lv.head >= len(b) {
		lv.head -= len(b)
		return
	}
	older := b[:len(b)-lv.head]
	lv.head = 0
	lv.blocks = append([][]byte{append(make([]byte, 0, len(older)), older...)}, lv.blocks...)
}
