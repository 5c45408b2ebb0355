package session

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkReadLog10k reads (and checks for repair) a log of 10,000
// events of realistic turns (about 3.5 MB). Target: ≤ 100 ms.
func BenchmarkReadLog10k(b *testing.B) {
	path := writeLog(b, b.TempDir(), sampleEvents(10000))
	if fi, err := os.Stat(path); err == nil {
		b.SetBytes(fi.Size())
	}
	b.ReportAllocs()
	for b.Loop() {
		l, err := ReadLog(path)
		if err != nil || len(l.Events) < 10000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppend is the cost of logging one event through a Store (the
// encoding and the write to the file; no fsync), over a mix of realistic
// events.
func BenchmarkAppend(b *testing.B) {
	events := sampleEvents(2000)
	st := NewLoggedStore(nil, NewLog(filepath.Join(b.TempDir(), "s.jsonl"), NewHeader("s", "/w", 1)), nil)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		st.Emit(events[i%len(events)].Data)
		i++
	}
	b.StopTimer()
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSync is the cost of one Log.Sync (fsync) after a turn's worth
// of events, as the bridge does at every turn end.
func BenchmarkSync(b *testing.B) {
	events := sampleEvents(21)
	l := NewLog(filepath.Join(b.TempDir(), "s.jsonl"), NewHeader("s", "/w", 1))
	defer l.Close()
	for b.Loop() {
		for _, ev := range events {
			l.Append(ev)
		}
		if err := l.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList lists a state dir of 200 sessions.
func BenchmarkList(b *testing.B) {
	root := b.TempDir()
	events := sampleEvents(43)
	for i := range 200 {
		id := "sess_" + string(rune('a'+i%26)) + itoa(i)
		l := NewLog(LogPath(root, "/w/"+itoa(i%5), id), NewHeader(id, "/w/"+itoa(i%5), 1))
		for _, ev := range events {
			l.Append(ev)
		}
		l.Close()
	}
	for b.Loop() {
		infos, err := List(root, "")
		if err != nil || len(infos) != 200 {
			b.Fatal(len(infos), err)
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// BenchmarkIndex1000 lists a state dir of 1,000 sessions (each a log of
// 43 realistic events, about 20 KB) the way `session/list` does:
// first-page is the first page of 50 by a fresh Index (every log read),
// all-pages the 20 pages of one walk by one Index (the first page reads
// every log, the later ones stat about 51 each), relist a walk from the
// start again over unchanged logs (every log stat'ed, none read).
// Targets: first page ≤ 30 ms, all pages about one full read.
func BenchmarkIndex1000(b *testing.B) {
	root := b.TempDir()
	events := sampleEvents(43)
	for i := range 1000 {
		id := "sess_" + itoa(i)
		l := NewLog(LogPath(root, "/w/"+itoa(i%10), id), NewHeader(id, "/w/"+itoa(i%10), 1))
		for _, ev := range events {
			l.Append(ev)
		}
		l.Close()
		tm := time.UnixMilli(1700000000000 + int64(i)*60000)
		os.Chtimes(l.Path(), tm, tm)
	}
	walk := func(b *testing.B, x *Index) {
		var after func(Info) bool
		seen := 0
		for {
			page, more, err := x.Page(root, "", after, 50)
			if err != nil {
				b.Fatal(err)
			}
			seen += len(page)
			if !more {
				break
			}
			last := page[len(page)-1]
			after = func(in Info) bool {
				return in.UpdatedAt < last.UpdatedAt || in.UpdatedAt == last.UpdatedAt && in.ID > last.ID
			}
		}
		if seen != 1000 {
			b.Fatalf("walk saw %d sessions", seen)
		}
	}
	b.Run("first-page", func(b *testing.B) {
		for b.Loop() {
			var x Index
			if page, _, err := x.Page(root, "", nil, 50); err != nil || len(page) != 50 {
				b.Fatal(len(page), err)
			}
		}
	})
	b.Run("all-pages", func(b *testing.B) {
		for b.Loop() {
			var x Index
			walk(b, &x)
			if x.reads != 1000 {
				b.Fatalf("%d logs read, want 1000", x.reads)
			}
		}
	})
	b.Run("relist", func(b *testing.B) {
		var x Index
		walk(b, &x)
		for b.Loop() {
			walk(b, &x)
		}
		if x.reads != 1000 {
			b.Fatalf("%d logs read, want 1000", x.reads)
		}
	})
}
