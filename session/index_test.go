package session

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

// indexFixture is a state directory of logs the index tests change.
type indexFixture struct {
	t    *testing.T
	root string
}

// write creates (or replaces) the log of id in cwd: a header, a first
// turn and, when title is set, its title; its modification time is
// mtime (Unix ms).
func (f indexFixture) write(id, cwd, title string, mtime int64) string {
	f.t.Helper()
	path := LogPath(f.root, cwd, id)
	os.Remove(path)
	l := NewLog(path, NewHeader(id, cwd, 5))
	l.Append(Event{Seq: 0, Time: 1, Data: TurnStart{Turn: 1}})
	if title != "" {
		l.Append(Event{Seq: 1, Time: 1, Data: Title{Title: title}})
	}
	if err := l.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.touch(path, mtime)
	return path
}

func (f indexFixture) touch(path string, mtime int64) {
	f.t.Helper()
	tm := time.UnixMilli(mtime)
	if err := os.Chtimes(path, tm, tm); err != nil {
		f.t.Fatal(err)
	}
}

// appendLine appends one raw line to path and sets its modification
// time to mtime.
func (f indexFixture) appendLine(path, line string, mtime int64) {
	f.t.Helper()
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := fh.WriteString(line + "\n"); err != nil {
		f.t.Fatal(err)
	}
	fh.Close()
	f.touch(path, mtime)
}

// check lists with x and with a fresh List, wants them equal, and
// returns the sessions and how many logs x read for it.
func (f indexFixture) check(x *Index, cwd string) ([]Info, int) {
	f.t.Helper()
	before := x.reads
	got, err := x.List(f.root, cwd)
	if err != nil {
		f.t.Fatal(err)
	}
	want, err := List(f.root, cwd)
	if err != nil {
		f.t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		f.t.Fatalf("Index.List(%q)\n got %+v\nwant %+v", cwd, got, want)
	}
	return got, x.reads - before
}

func ids(infos []Info) []string {
	out := []string{}
	for _, in := range infos {
		out = append(out, in.ID)
	}
	return out
}

// TestIndexReadsEachLogOnce: a second listing of unchanged logs reads
// none of them, and gives what a full read gives.
func TestIndexReadsEachLogOnce(t *testing.T) {
	f := indexFixture{t, t.TempDir()}
	for i := range 60 {
		f.write(fmt.Sprintf("s%02d", i), fmt.Sprintf("/w/%d", i%3), fmt.Sprintf("Title %d", i), int64(1000+i))
	}
	var x Index
	all, reads := f.check(&x, "")
	if len(all) != 60 || reads != 60 || all[0].ID != "s59" || all[0].Title != "Title 59" {
		t.Fatalf("first listing: %d sessions, %d reads, first %+v", len(all), reads, all[0])
	}
	for range 3 {
		if _, reads := f.check(&x, ""); reads != 0 {
			t.Errorf("listing unchanged logs read %d of them", reads)
		}
	}
	// A listing of one cwd neither reads nor forgets the others.
	w1, reads := f.check(&x, "/w/1")
	if len(w1) != 20 || reads != 0 {
		t.Errorf("cwd listing: %d sessions, %d reads", len(w1), reads)
	}
	if _, reads := f.check(&x, ""); reads != 0 {
		t.Errorf("after a cwd listing, the full listing read %d logs", reads)
	}
	if len(x.entries) != 60 {
		t.Errorf("the index holds %d entries, want 60", len(x.entries))
	}
}

// TestIndexSeesChanges: between two listings a session is added, one is
// deleted, one grows its title (and so its time), one is rewritten with
// a broken header, and a broken one is fixed; each listing equals a full
// read, and only the changed logs are read again.
func TestIndexSeesChanges(t *testing.T) {
	f := indexFixture{t, t.TempDir()}
	f.write("a", "/w", "A", 1000)
	pb := f.write("b", "/w", "", 2000)
	pc := f.write("c", "/v", "C", 3000)
	pd := f.write("d", "/w", "D", 4000)
	broken := filepath.Join(filepath.Dir(pb), "broken.jsonl")
	if err := os.WriteFile(broken, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var x Index
	if got, reads := f.check(&x, ""); !reflect.DeepEqual(ids(got), []string{"d", "c", "b", "a"}) || reads != 5 {
		t.Fatalf("first listing %q, %d reads", ids(got), reads)
	}

	f.write("e", "/v", "E", 1500) // new, older than most
	if err := os.Remove(pc); err != nil {
		t.Fatal(err)
	}
	f.appendLine(pb, `{"type":"session/title","seq":1,"time":1,"data":{"title":"B at last"}}`, 5000)
	got, reads := f.check(&x, "")
	if !reflect.DeepEqual(ids(got), []string{"b", "d", "e", "a"}) || reads != 2 || got[0].Title != "B at last" || got[0].UpdatedAt != 5000 {
		t.Fatalf("after changes %q (%+v), %d reads; want b first with its title, 2 reads (e, b)", ids(got), got[0], reads)
	}
	if _, ok := x.entries[pc]; ok {
		t.Error("the deleted log is still in the index")
	}

	// d's header is broken (same size would not be noticed; the
	// rewrite changes its time): it is skipped. The broken log is fixed.
	if err := os.WriteFile(pd, []byte("not a header\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.touch(pd, 4000)
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	f.write("broken", "/w", "Fixed", 6000)
	got, reads = f.check(&x, "")
	if !reflect.DeepEqual(ids(got), []string{"broken", "b", "e", "a"}) || reads != 2 {
		t.Fatalf("after rewrites %q, %d reads", ids(got), reads)
	}

	// A folder named like a log, a log that cannot be read.
	if err := os.Mkdir(LogPath(f.root, "/w", "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got, _ = f.check(&x, "/w"); !reflect.DeepEqual(ids(got), []string{"broken", "b", "a"}) {
		t.Fatalf("cwd /w: %q", ids(got))
	}
	// Everything removed.
	if err := os.RemoveAll(f.root); err != nil {
		t.Fatal(err)
	}
	if got, _ = f.check(&x, ""); len(got) != 0 || len(x.entries) != 0 {
		t.Fatalf("empty state dir: %q, %d entries", ids(got), len(x.entries))
	}
}

// TestIndexConcurrent lists from several goroutines while logs are added
// (run with -race).
func TestIndexConcurrent(t *testing.T) {
	f := indexFixture{t, t.TempDir()}
	var x Index
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := x.List(f.root, ""); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		f.write(fmt.Sprintf("s%d", g), "/w", "T", int64(1000+g))
	}
	wg.Wait()
	if got, _ := f.check(&x, ""); len(got) != 4 {
		t.Errorf("%d sessions, want 4", len(got))
	}
}

// pageOracle pages over a full read of the logs, as Page must.
func pageOracle(t *testing.T, root, cwd string, after func(Info) bool, n int) ([]Info, bool) {
	t.Helper()
	all, err := List(root, cwd)
	if err != nil {
		t.Fatal(err)
	}
	start := 0
	for after != nil && start < len(all) && !after(all[start]) {
		start++
	}
	rest := all[start:]
	if len(rest) > n {
		return rest[:n], true
	}
	return rest, false
}

// afterInfo is the bridge's cursor: older than last, or as old with a
// greater ID.
func afterInfo(last Info) func(Info) bool {
	return func(in Info) bool {
		return in.UpdatedAt < last.UpdatedAt || in.UpdatedAt == last.UpdatedAt && in.ID > last.ID
	}
}

// TestIndexPageLooksOnlyAhead: a later page stats only the logs it
// shows and one more, and reads none of them.
func TestIndexPageLooksOnlyAhead(t *testing.T) {
	f := indexFixture{t, t.TempDir()}
	for i := range 200 {
		f.write(fmt.Sprintf("s%03d", i), fmt.Sprintf("/w/%d", i%4), "", int64(1000+i))
	}
	var x Index
	page, more, err := x.Page(f.root, "", nil, 50)
	if err != nil || len(page) != 50 || !more || x.reads != 200 {
		t.Fatalf("first page: %d sessions, more %v, %d reads, %v", len(page), more, x.reads, err)
	}
	for k := 2; more; k++ {
		reads, stats := x.reads, x.stats
		page, more, err = x.Page(f.root, "", afterInfo(page[len(page)-1]), 50)
		if err != nil {
			t.Fatal(err)
		}
		if x.reads != reads || x.stats-stats > 51 {
			t.Errorf("page %d read %d logs and stat'ed %d", k, x.reads-reads, x.stats-stats)
		}
		if k > 4 {
			t.Fatal("more than 4 pages of 50 for 200 sessions")
		}
	}
	// A position in a cwd never looked at from the start looks first.
	page, more, err = x.Page(f.root, "/w/1", afterInfo(Info{ID: "s150", UpdatedAt: 1150}), 10)
	want, wantMore := pageOracle(t, f.root, "/w/1", afterInfo(Info{ID: "s150", UpdatedAt: 1150}), 10)
	if err != nil || !reflect.DeepEqual(page, want) || more != wantMore {
		t.Errorf("cwd page %v %v %v, want %v %v", ids(page), more, err, ids(want), wantMore)
	}
}

// TestIndexPageRandomChanges walks the pages of a state dir while logs
// are created, deleted (and created again) and grown at random between
// the pages, each change stamped later than everything before it, as a
// clock does, and checks every page against paging over a full read.
func TestIndexPageRandomChanges(t *testing.T) {
	f := indexFixture{t, t.TempDir()}
	rnd := rand.New(rand.NewPCG(3, 18))
	now := int64(10000)
	var live []string
	create := func() {
		// A new log is newer than every page already served (equal times
		// among themselves: the ID breaks ties); one created older than
		// the position is what a later page cannot see (see Index).
		now += 1 + int64(rnd.IntN(2))
		id := fmt.Sprintf("s%04d", len(live)+rnd.IntN(1000)*10)
		for _, p := range live {
			if p == LogPath(f.root, "/w", id) {
				return
			}
		}
		live = append(live, f.write(id, "/w", "", now))
	}
	for range 60 {
		create()
		now -= int64(rnd.IntN(2)) // ties among the first logs
	}
	var x Index
	for walk := range 20 {
		n := 1 + rnd.IntN(12)
		var after func(Info) bool
		for pages := 0; ; pages++ {
			cwd := ""
			if walk%3 == 2 {
				cwd = "/w"
			}
			page, more, err := x.Page(f.root, cwd, after, n)
			if err != nil {
				t.Fatal(err)
			}
			want, wantMore := pageOracle(t, f.root, cwd, after, n)
			if !reflect.DeepEqual(page, want) || more != wantMore {
				t.Fatalf("walk %d page %d (n %d):\n got %q %v\nwant %q %v", walk, pages, n, ids(page), more, ids(want), wantMore)
			}
			if !more {
				break
			}
			after = afterInfo(page[len(page)-1])
			for range rnd.IntN(4) {
				switch i := rnd.IntN(len(live)); rnd.IntN(3) {
				case 0:
					create()
				case 1:
					os.Remove(live[i])
					live = append(live[:i], live[i+1:]...)
				case 2: // grows, now
					now++
					mt := now
					f.appendLine(live[i], `{"type":"turn/end","seq":9,"time":1,"data":{"turn":1,"reason":"end_turn"}}`, mt)
				}
			}
		}
	}
}
