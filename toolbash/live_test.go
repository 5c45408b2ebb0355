package toolbash

import (
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/tools"
)

// liveRig is a liveView whose reports are recorded.
type liveRig struct {
	lv      *liveView
	mu      sync.Mutex
	reports []report
}

// newLiveRig starts a live view with the given pacing, chunk size and cap
// (the bytes of output it shows in all).
func newLiveRig(interval time.Duration, chunk int, limit int64) *liveRig {
	r := &liveRig{}
	r.lv = newLiveView(func(p tools.Progress) {
		r.mu.Lock()
		r.reports = append(r.reports, report{time.Now(), p.Output, p.Note})
		r.mu.Unlock()
	}, limit)
	r.lv.interval, r.lv.chunk = interval, chunk
	go r.lv.run()
	return r
}

func (r *liveRig) all() []report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]report(nil), r.reports...)
}

// joined is the terminal the reports make.
func (r *liveRig) joined() string { return terminalText(r.all()) }

func (r *liveRig) finish(t *testing.T, paths []string, notes ...string) {
	t.Helper()
	r.lv.finish(paths, notes)
	select {
	case <-r.lv.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the live view did not finish")
	}
}

// TestLiveCarriesSplitCharacter: the halves of a character read apart
// (even from interleaved streams) are reported whole.
func TestLiveCarriesSplitCharacter(t *testing.T) {
	r := newLiveRig(time.Millisecond, 1<<10, 1<<20)
	r.lv.add(0, []byte("caf\xc3"))
	r.lv.add(1, []byte("E\xe2\x82"))
	// What is reported before the other halves come is the whole
	// characters only (in one report or, when the view ran between the
	// two adds, two): the halves are held back.
	waitUntil(t, 10*time.Second, func() bool { return len(r.joined()) >= len("cafE") })
	time.Sleep(20 * time.Millisecond) // a held-back half would be reported by now (interval 1 ms)
	if got := r.joined(); got != "cafE" {
		t.Errorf("reported before the halves came: %q, want cafE (the halves held back)", got)
	}
	r.lv.add(0, []byte("\xa9!"))
	r.lv.add(1, []byte("\xac"))
	r.lv.add(0, []byte("\xff\n")) // invalid: passed on as is
	r.finish(t, nil)
	for _, rp := range r.all() {
		if strings.ContainsRune(strings.ToValidUTF8(rp.text, "\uFFFD"), utf8.RuneError) && !strings.Contains(rp.text, "\xff") {
			t.Errorf("report %q splits a character", rp.text)
		}
	}
	if got := r.joined(); got != "cafE€é!\xff\n" && got != "cafEé!€\xff\n" {
		t.Errorf("joined %q", got)
	}
}

// TestLiveChunksAndPacing: while the command runs, a burst is reported
// in chunks of at most chunk bytes, never splitting a character, at most
// one per interval.
func TestLiveChunksAndPacing(t *testing.T) {
	r := newLiveRig(20*time.Millisecond, 10, 1<<20)
	in := strings.Repeat("ab€", 20) // 5 bytes each, 100 bytes
	r.lv.add(0, []byte(in))
	waitUntil(t, 30*time.Second, func() bool { return r.joined() == in })
	r.finish(t, nil)
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

// TestLiveCapHeadAndTail: a view of cap 40 shows the first 30 bytes as
// they come (not splitting a character), then pauses; at the end one note
// says how much was left out and where, then the last part follows from a
// line start, then the notes.
func TestLiveCapHeadAndTail(t *testing.T) {
	r := newLiveRig(time.Millisecond, 1<<10, 40)
	r.lv.add(0, []byte("1234567890123456789012345678€€\n")) // the budget falls inside the first €
	waitUntil(t, 30*time.Second, func() bool { return len(r.all()) == 1 })
	r.lv.add(1, []byte(strings.Repeat("x", 100)+"\nlast line\n"))
	time.Sleep(20 * time.Millisecond)
	if n := len(r.all()); n != 1 {
		t.Errorf("%d reports while paused, want the first only", n)
	}
	r.finish(t, []string{"/tmp/a-stdout.log"}, "[timed out after 5ms]")
	want := "1234567890123456789012345678\n" +
		"[output truncated; 108 bytes left out here (a card shows at most 40 bytes of output); full output: /tmp/a-stdout.log]\n" +
		"last line\n[timed out after 5ms]\n"
	if got := r.joined(); got != want {
		t.Errorf("joined %q\nwant   %q", got, want)
	}
	// Output shown: 28 + 10 bytes, at most the cap.
	shown := 0
	for _, rp := range r.all() {
		shown += len(rp.text)
	}
	if shown != 38 {
		t.Errorf("%d bytes of output shown, want 38", shown)
	}
}

// TestLiveCapTailFits: output that passes the budget but not the cap is
// shown whole, with no note.
func TestLiveCapTailFits(t *testing.T) {
	r := newLiveRig(time.Millisecond, 1<<10, 40)
	in := strings.Repeat("a", 25) + strings.Repeat("b", 15)
	r.lv.add(0, []byte(in))
	r.finish(t, nil)
	if got := r.joined(); got != in {
		t.Errorf("joined %q", got)
	}
}

// TestLiveFinishNoPacing: once the command has ended, what is left is
// reported at once, not an interval later (the interval is long, so that
// the difference shows on a loaded machine).
func TestLiveFinishNoPacing(t *testing.T) {
	t.Parallel()
	const interval = 6 * time.Second
	r := newLiveRig(interval, 4, 1<<20)
	r.lv.add(0, []byte("a\n"))
	waitUntil(t, 30*time.Second, func() bool { return len(r.all()) == 1 })
	r.lv.add(0, []byte("b\nccccdddd"))
	start := time.Now()
	r.finish(t, nil, "[note]")
	if took := time.Since(start); took > interval/2 {
		t.Errorf("finish took %v with an interval of %v", took, interval)
	}
	if got := r.joined(); got != "a\nb\nccccdddd\n[note]\n" {
		t.Errorf("joined %q", got)
	}
}

// TestLiveAbort: after abort returns, nothing more is reported.
func TestLiveAbort(t *testing.T) {
	r := newLiveRig(30*time.Millisecond, 4, 1<<20)
	r.lv.add(0, []byte(strings.Repeat("x", 400)))
	waitUntil(t, 30*time.Second, func() bool { return len(r.all()) > 0 })
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
// without waiting for the interval (long here, 3 s, so that "at once"
// shows on a loaded machine: within half of it).
func TestLiveFirstReportAtOnce(t *testing.T) {
	t.Parallel()
	const interval = 3 * time.Second
	r := newLiveRig(interval, LiveChunk, LiveCap)
	start := time.Now()
	r.lv.add(0, []byte("hello\n"))
	waitUntil(t, 30*time.Second, func() bool { return len(r.all()) == 1 })
	if d := r.all()[0].at.Sub(start); d > interval/2 {
		t.Errorf("first report after %v", d)
	}
	time.Sleep(interval + 100*time.Millisecond)
	start = time.Now()
	r.lv.add(1, []byte("again\n"))
	waitUntil(t, 30*time.Second, func() bool { return len(r.all()) == 2 })
	if d := r.all()[1].at.Sub(start); d > interval/2 {
		t.Errorf("report after a quiet spell took %v", d)
	}
	r.finish(t, nil)
}
