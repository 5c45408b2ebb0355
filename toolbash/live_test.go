package toolbash

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/tools"
)

// The live view's pacing is in-process time: every test here runs in a
// synctest bubble, where the clock moves only when every goroutine of the
// bubble is blocked, so intervals are exact and "nothing more was
// reported" is checked after synctest.Wait (the view's goroutine is
// blocked for good), never after a guessed sleep.

// liveRig is a liveView whose reports are recorded.
type liveRig struct {
	lv      *liveView
	mu      sync.Mutex
	reports []report
}

// newLiveRig starts a live view with the given pacing, chunk size and cap
// (the bytes of output it shows in all). Called inside a bubble, the
// view's goroutine belongs to it.
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

// finish ends the view and waits for its goroutine to return.
func (r *liveRig) finish(paths []string, notes ...string) {
	r.lv.finish(paths, notes)
	<-r.lv.done
}

// settle lets d of bubble time pass, then waits until the view's
// goroutine is blocked: every report due by then has been made.
func settle(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// TestLiveCarriesSplitCharacter: the halves of a character read apart
// (even from interleaved streams) are reported whole.
func TestLiveCarriesSplitCharacter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLiveRig(time.Millisecond, 1<<10, 1<<20)
		r.lv.add(0, []byte("caf\xc3"))
		r.lv.add(1, []byte("E\xe2\x82"))
		// Many intervals later, what was reported is the whole characters
		// only: the halves are held back.
		settle(20 * time.Millisecond)
		if got := r.joined(); got != "cafE" {
			t.Errorf("reported before the halves came: %q, want cafE (the halves held back)", got)
		}
		r.lv.add(0, []byte("\xa9!"))
		r.lv.add(1, []byte("\xac"))
		r.lv.add(0, []byte("\xff\n")) // invalid: passed on as is
		r.finish(nil)
		for _, rp := range r.all() {
			if strings.ContainsRune(strings.ToValidUTF8(rp.text, "\uFFFD"), utf8.RuneError) && !strings.Contains(rp.text, "\xff") {
				t.Errorf("report %q splits a character", rp.text)
			}
		}
		if got := r.joined(); got != "cafE€é!\xff\n" && got != "cafEé!€\xff\n" {
			t.Errorf("joined %q", got)
		}
	})
}

// TestLiveChunksAndPacing: while the command runs, a burst is reported
// in chunks of at most chunk bytes, never splitting a character, the
// first at once and then one per interval, never closer.
func TestLiveChunksAndPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 20 * time.Millisecond
		r := newLiveRig(interval, 10, 1<<20)
		start := time.Now()
		in := strings.Repeat("ab€", 20) // 5 bytes each, 100 bytes
		r.lv.add(0, []byte(in))
		settle(time.Second)
		r.finish(nil)
		rs := r.all()
		if got := r.joined(); got != in {
			t.Fatalf("joined %q", got)
		}
		// 100 bytes in chunks of 10 bytes (two characters): 10 reports.
		if len(rs) != 10 {
			t.Errorf("%d reports, want 10", len(rs))
		}
		for i, rp := range rs {
			if len(rp.text) > 10 || !utf8.ValidString(rp.text) {
				t.Errorf("report %d: %q", i, rp.text)
			}
			if want := start.Add(time.Duration(i) * interval); !rp.at.Equal(want) {
				t.Errorf("report %d at +%v, want +%v", i, rp.at.Sub(start), want.Sub(start))
			}
		}
	})
}

// TestLiveCapHeadAndTail: a view of cap 40 shows the first 30 bytes as
// they come (not splitting a character), then pauses; at the end one note
// says how much was left out and where, then the last part follows from a
// line start, then the notes.
func TestLiveCapHeadAndTail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLiveRig(time.Millisecond, 1<<10, 40)
		r.lv.add(0, []byte("1234567890123456789012345678€€\n")) // the budget falls inside the first €
		settle(0)
		if n := len(r.all()); n != 1 {
			t.Fatalf("%d reports of the first output, want 1", n)
		}
		r.lv.add(1, []byte(strings.Repeat("x", 100)+"\nlast line\n"))
		settle(20 * time.Millisecond)
		if n := len(r.all()); n != 1 {
			t.Errorf("%d reports while paused, want the first only", n)
		}
		r.finish([]string{"/tmp/a-stdout.log"}, "[timed out after 5ms]")
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
	})
}

// TestLiveCapTailFits: output that passes the budget but not the cap is
// shown whole, with no note.
func TestLiveCapTailFits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLiveRig(time.Millisecond, 1<<10, 40)
		in := strings.Repeat("a", 25) + strings.Repeat("b", 15)
		r.lv.add(0, []byte(in))
		r.finish(nil)
		if got := r.joined(); got != in {
			t.Errorf("joined %q", got)
		}
	})
}

// TestLiveFinishNoPacing: once the command has ended, what is left is
// reported at once, not an interval later.
func TestLiveFinishNoPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 6 * time.Second
		r := newLiveRig(interval, 4, 1<<20)
		r.lv.add(0, []byte("a\n"))
		settle(0)
		if n := len(r.all()); n != 1 {
			t.Fatalf("%d reports of the first output, want 1", n)
		}
		r.lv.add(0, []byte("b\nccccdddd"))
		start := time.Now()
		r.finish(nil, "[note]")
		if took := time.Since(start); took != 0 {
			t.Errorf("finish took %v of the view's clock, want no wait (interval %v)", took, interval)
		}
		if got := r.joined(); got != "a\nb\nccccdddd\n[note]\n" {
			t.Errorf("joined %q", got)
		}
	})
}

// TestLiveAbort: after abort returns, nothing more is reported.
func TestLiveAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLiveRig(30*time.Millisecond, 4, 1<<20)
		r.lv.add(0, []byte(strings.Repeat("x", 400)))
		settle(0)
		r.lv.abort()
		n := len(r.all())
		settle(time.Second) // 33 intervals: 33 more reports, had it not stopped
		r.lv.add(0, []byte("late"))
		<-r.lv.done
		if m := len(r.all()); m != n || n == 0 {
			t.Errorf("%d reports at abort, %d later", n, m)
		}
	})
}

// TestLiveFirstReportAtOnce: output after a quiet spell is reported
// without waiting for the interval.
func TestLiveFirstReportAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 3 * time.Second
		r := newLiveRig(interval, LiveChunk, LiveCap)
		start := time.Now()
		r.lv.add(0, []byte("hello\n"))
		settle(0)
		if rs := r.all(); len(rs) != 1 || !rs[0].at.Equal(start) {
			t.Fatalf("reports %v, want one at once", rs)
		}
		settle(interval + 100*time.Millisecond)
		start = time.Now()
		r.lv.add(1, []byte("again\n"))
		settle(0)
		if rs := r.all(); len(rs) != 2 || !rs[1].at.Equal(start) {
			t.Errorf("reports %v, want the second at once after the quiet spell", rs)
		}
		r.finish(nil)
	})
}
