package toolbash

import (
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// liveRig is a liveView whose reports are recorded.
type liveRig struct {
	lv      *liveView
	mu      sync.Mutex
	reports []report
}

func newLiveRig(interval time.Duration, chunk int, limit int64) *liveRig {
	r := &liveRig{}
	r.lv = newLiveView(func(s string) {
		r.mu.Lock()
		r.reports = append(r.reports, report{time.Now(), s})
		r.mu.Unlock()
	}, nil)
	r.lv.interval, r.lv.chunk, r.lv.cap = interval, chunk, limit
	r.lv.queue.block = chunk
	go r.lv.run()
	return r
}

func (r *liveRig) all() []report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]report(nil), r.reports...)
}

func (r *liveRig) joined() string {
	var b strings.Builder
	for _, rp := range r.all() {
		b.WriteString(rp.text)
	}
	return b.String()
}

func (r *liveRig) finish(t *testing.T, trailer string) {
	t.Helper()
	r.lv.finish(trailer)
	select {
	case <-r.lv.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the live view did not finish")
	}
}

// TestLiveCarriesSplitCharacter: the halves of a character read apart
// (even from interleaved streams) are reported whole.
func TestLiveCarriesSplitCharacter(t *testing.T) {
	r := newLiveRig(time.Millisecond, 1<<10, 1<<20)
	r.lv.add(0, []byte("caf\xc3"))
	r.lv.add(1, []byte("E\xe2\x82"))
	time.Sleep(20 * time.Millisecond)
	r.lv.add(0, []byte("\xa9!"))
	r.lv.add(1, []byte("\xac"))
	r.lv.add(0, []byte("\xff\n")) // invalid: passed on as is
	r.finish(t, "")
	for _, rp := range r.all() {
		if strings.ContainsRune(strings.ToValidUTF8(rp.text, "\uFFFD"), utf8.RuneError) && !strings.Contains(rp.text, "\xff") {
			t.Errorf("report %q splits a character", rp.text)
		}
	}
	if got := r.joined(); got != "cafE€é!\xff\n" && got != "cafEé!€\xff\n" {
		t.Errorf("joined %q", got)
	}
	first := r.all()[0].text
	if first != "cafE" {
		t.Errorf("first report %q, want cafE (the halves held back)", first)
	}
}

// TestLiveChunksAndPacing: a burst is reported in chunks of at most chunk
// bytes, never splitting a character, at most one per interval.
func TestLiveChunksAndPacing(t *testing.T) {
	r := newLiveRig(20*time.Millisecond, 10, 1<<20)
	in := strings.Repeat("ab€", 20) // 5 bytes each, 100 bytes
	r.lv.add(0, []byte(in))
	r.finish(t, "")
	rs := r.all()
	if got := r.joined(); got != in {
		t.Fatalf("joined %q", got)
	}
	for i, rp := range rs {
		if len(rp.text) > 10 || !utf8.ValidString(rp.text) {
			t.Errorf("report %d: %q", i, rp.text)
		}
		if i > 0 {
			if gap := rp.at.Sub(rs[i-1].at); gap < 18*time.Millisecond {
				t.Errorf("reports %d and %d only %v apart", i-1, i, gap)
			}
		}
	}
}

// TestLiveCapAndTrailer: past the cap nothing more is reported; the
// trailer comes last, on its own line.
func TestLiveCapAndTrailer(t *testing.T) {
	r := newLiveRig(time.Millisecond, 1<<10, 10)
	r.lv.add(0, []byte("12345678€€")) // the cap falls inside the first €
	r.lv.add(0, []byte("more"))
	if h := r.lv.hiddenBytes(); h != 10 {
		t.Errorf("hidden %d, want 10", h)
	}
	r.finish(t, "[limit]\n")
	if got := r.joined(); got != "12345678\n[limit]\n" {
		t.Errorf("joined %q", got)
	}
}

// TestLiveAbort: after abort returns, nothing more is reported.
func TestLiveAbort(t *testing.T) {
	r := newLiveRig(30*time.Millisecond, 4, 1<<20)
	r.lv.add(0, []byte(strings.Repeat("x", 400)))
	time.Sleep(40 * time.Millisecond)
	r.lv.abort()
	n := len(r.all())
	time.Sleep(100 * time.Millisecond)
	r.lv.add(0, []byte("late"))
	<-r.lv.done
	if m := len(r.all()); m != n || n == 0 {
		t.Errorf("%d reports at abort, %d later", n, m)
	}
}

// TestLiveFirstReportAtOnce: output after a quiet spell is reported
// without waiting for the interval.
func TestLiveFirstReportAtOnce(t *testing.T) {
	r := newLiveRig(LiveInterval, LiveChunk, LiveCap)
	start := time.Now()
	r.lv.add(0, []byte("hello\n"))
	waitUntil(t, time.Second, func() bool { return len(r.all()) == 1 })
	if d := r.all()[0].at.Sub(start); d > 90*time.Millisecond {
		t.Errorf("first report after %v", d)
	}
	time.Sleep(2 * LiveInterval)
	start = time.Now()
	r.lv.add(1, []byte("again\n"))
	waitUntil(t, time.Second, func() bool { return len(r.all()) == 2 })
	if d := r.all()[1].at.Sub(start); d > 90*time.Millisecond {
		t.Errorf("report after a quiet spell took %v", d)
	}
	r.finish(t, "")
}
