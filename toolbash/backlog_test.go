package toolbash

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestBacklogMatchesFIFO pushes, peeks and consumes at random, with a
// small memory limit so that the overflow file is used and drained again
// and again, and compares with a plain buffer.
func TestBacklogMatchesFIFO(t *testing.T) {
	dir := t.TempDir()
	files := 0
	q := backlog{block: 7, memLimit: 20, open: func() (*os.File, error) {
		files++
		return os.CreateTemp(dir, "ovf-*")
	}}
	defer q.close()
	var want bytes.Buffer
	rng := rand.New(rand.NewPCG(1, 2))
	next := byte(0)
	usedFile := false
	for step := range 5000 {
		if rng.IntN(2) == 0 {
			p := make([]byte, rng.IntN(30))
			for i := range p {
				p[i] = next
				next++
			}
			if n := q.push(p); n != len(p) {
				t.Fatalf("step %d: push kept %d of %d", step, n, len(p))
			}
			want.Write(p)
		} else {
			n := rng.IntN(q.pending() + 1)
			got := q.peek(nil, n+rng.IntN(3))
			if exp := want.Bytes()[:min(want.Len(), len(got))]; !bytes.Equal(got, exp) || len(got) < n {
				t.Fatalf("step %d: peek %v, want %v", step, got, exp)
			}
			q.consume(n)
			want.Next(n)
		}
		if q.pending() != want.Len() {
			t.Fatalf("step %d: pending %d, want %d", step, q.pending(), want.Len())
		}
		if q.mem > q.memLimit+30 {
			t.Fatalf("step %d: %d bytes in memory", step, q.mem)
		}
		usedFile = usedFile || q.fileW > 0
	}
	if !usedFile || files != 1 {
		t.Errorf("overflow file used %v, created %d times", usedFile, files)
	}
}

// TestLiveThroughOverflowFile: a burst larger than the memory part goes
// through the overflow file and comes out whole, in order, in chunks that
// never split a character.
func TestLiveThroughOverflowFile(t *testing.T) {
	dir := t.TempDir()
	r := &liveRig{}
	r.lv = newLiveView(func(s string) {
		r.mu.Lock()
		r.reports = append(r.reports, report{time.Now(), s})
		r.mu.Unlock()
	}, func() (*os.File, error) { return os.CreateTemp(dir, "ovf-*") })
	r.lv.interval, r.lv.chunk = time.Millisecond, 1000
	r.lv.queue.block, r.lv.queue.memLimit = 1000, 3000
	go r.lv.run()
	var in strings.Builder
	for i := range 2000 {
		s := strings.Repeat("é€😀", i%5) + "x"
		in.WriteString(s)
		r.lv.add(0, []byte(s))
	}
	r.finish(t, "")
	if got := r.joined(); got != in.String() {
		t.Fatalf("joined output differs: %d bytes, want %d", len(got), in.Len())
	}
	for _, rp := range r.all() {
		if len(rp.text) > 1000 || !utf8.ValidString(rp.text) {
			t.Fatalf("report of %d bytes splits a character", len(rp.text))
		}
	}
}
