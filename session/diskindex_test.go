package session

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// indexChurnEnv makes the test binary a child that changes and lists the
// logs of a state directory at random (see TestMain and churn):
// ROOT:SEED:OPS.
const indexChurnEnv = "SESSION_INDEX_CHURN"

var churnCwds = []string{"/w/a", "/w/b", "/w/c"}

// churn makes ops random changes to the logs under root whose ids start
// with prefix, the sessions listed with one Index between them: a log
// created (with a title, or without), deleted, grown by a line (a usage
// now and then), its title file replaced alone (as crash repair does),
// or a walk through the pages of a random size, of all cwds or of one.
func churn(root, prefix string, rnd *rand.Rand, ops int) error {
	var x Index
	var live []string
	for op := range ops {
		i := rnd.IntN(max(len(live), 1))
		// Now and then the folders get an old time (a unique one): the
		// Index then trusts them and takes their logs from what it knows.
		if rnd.IntN(3) == 0 {
			for _, cwd := range churnCwds {
				at := time.Now().Add(-time.Hour)
				_ = os.Chtimes(filepath.Dir(LogPath(root, cwd, "x")), at, at)
			}
		}
		switch k := rnd.IntN(6); {
		case k == 0 || len(live) == 0:
			id := fmt.Sprintf("%s%03d", prefix, op)
			cwd := churnCwds[rnd.IntN(len(churnCwds))]
			path := LogPath(root, cwd, id)
			l := NewLog(path, NewHeader(id, cwd, int64(op)))
			if err := l.Append(Event{Seq: 0, Time: 1, Data: TurnStart{Turn: 1}}); err != nil {
				return err
			}
			if rnd.IntN(2) == 0 {
				if err := l.Append(Event{Seq: 1, Time: 1, Data: Title{Title: "title\t" + id}}); err != nil {
					return err
				}
			}
			if err := l.Close(); err != nil {
				return err
			}
			live = append(live, path)
		case k == 1:
			if err := Delete(live[i]); err != nil {
				return err
			}
			live = append(live[:i], live[i+1:]...)
		case k == 2:
			line := `{"type":"turn/end","seq":9,"time":1,"data":{"turn":1,"reason":"end_turn"}}`
			if rnd.IntN(2) == 0 {
				line = `{"type":"usage/update","seq":9,"time":1,"data":{"turn":1,"step":1,"used":` + strconv.Itoa(op) + `,"size":1000,"cost":{"amount":0.5,"currency":"USD"}}}`
			}
			f, err := os.OpenFile(live[i], os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteString(line + "\n")
			f.Close()
			if err != nil {
				return err
			}
		case k == 3:
			if err := WriteTitleFile(live[i], Title{Title: fmt.Sprintf("renamed %d", op)}); err != nil {
				return err
			}
		default:
			cwd := ""
			if rnd.IntN(2) == 0 {
				cwd = churnCwds[rnd.IntN(len(churnCwds))]
			}
			var after func(Info) bool
			for {
				page, more, err := x.Page(root, cwd, after, 1+rnd.IntN(8))
				if err != nil {
					return err
				}
				if !more {
					break
				}
				after = afterInfo(page[len(page)-1])
			}
		}
	}
	return nil
}

// runChurnChild is TestMain's part for indexChurnEnv.
func runChurnChild(spec string) int {
	parts := strings.Split(spec, ":")
	seed, _ := strconv.ParseUint(parts[1], 10, 64)
	ops, _ := strconv.Atoi(parts[2])
	if err := churn(parts[0], "child"+parts[1]+"-", rand.New(rand.NewPCG(seed, 2)), ops); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestIndexFileAcrossProcesses: this process and a child change and list
// the logs of one state directory at once, both keeping its list index
// file up to date; afterwards every walk, of all cwds and of each, page
// size by page size, equals paging over a full read, through the Index
// that lived through the changes and through a new one (a new process:
// it starts from the index file); and a second new one reads no log at
// all (the first wrote all it read), and finds the usages the logs end
// with.
func TestIndexFileAcrossProcesses(t *testing.T) {
	root := t.TempDir()
	for seed := uint64(1); seed <= 3; seed++ {
		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d:%d", indexChurnEnv, root, seed, 150))
		child.Stderr = os.Stderr
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		err := churn(root, fmt.Sprintf("p%d-", seed), rand.New(rand.NewPCG(seed, 1)), 150)
		if werr := child.Wait(); err != nil || werr != nil {
			t.Fatalf("churn: %v; child: %v", err, werr)
		}
	}
	all, err := List(root, "")
	if err != nil || len(all) < 20 {
		t.Fatalf("%d sessions listed, %v", len(all), err)
	}
	for _, cwd := range churnCwds {
		if in, _ := List(root, cwd); len(in) == 0 || len(in) == len(all) {
			t.Fatalf("%d of %d sessions in %s", len(in), len(all), cwd)
		}
	}
	var lived Index
	if _, err := lived.List(root, ""); err != nil { // the one that saw changes
		t.Fatal(err)
	}
	var fresh, second Index
	for _, x := range []*Index{&lived, &fresh} {
		walkEqual(t, x, root)
	}
	walkEqual(t, &second, root)
	if second.reads != 0 {
		t.Errorf("a new Index read %d logs after another wrote the index file", second.reads)
	}
	for _, in := range all {
		u, ok := second.LastUsage(in.Path)
		wu, wok := LastUsage(in.Path)
		if ok != wok || !reflect.DeepEqual(u, wu) {
			t.Errorf("%s: Index.LastUsage %+v %v, LastUsage %+v %v", in.ID, u, ok, wu, wok)
		}
	}
	if second.reads != 0 {
		t.Errorf("the usages were read again (%d reads)", second.reads)
	}
}

// walkEqual walks every listing of root with x, page size by page size,
// checking each page against paging over a full read.
func walkEqual(t *testing.T, x *Index, root string) {
	t.Helper()
	for _, cwd := range append([]string{""}, churnCwds...) {
		for _, n := range []int{1, 3, 7, 50} {
			var after func(Info) bool
			for pages := 0; ; pages++ {
				page, more, err := x.Page(root, cwd, after, n)
				if err != nil {
					t.Fatal(err)
				}
				want, wantMore := pageOracle(t, root, cwd, after, n)
				if !reflect.DeepEqual(page, want) || more != wantMore {
					t.Fatalf("cwd %q page %d (n %d):\n got %+v %v\nwant %+v %v", cwd, pages, n, page, more, want, wantMore)
				}
				if !more {
					break
				}
				after = afterInfo(page[len(page)-1])
			}
		}
	}
}

// TestIndexFileLines: an index line gives back what it was made of, odd
// characters included; lines it did not write are not entries.
func TestIndexFileLines(t *testing.T) {
	e := indexEntry{size: 12, mtime: 1_700_000_000_123_456_789, title: 5, ok: true,
		info:  Info{ID: "s\\1", Cwd: "/w/tab\there", CreatedAt: 7, Title: "line\nbreak\r\\t", AdditionalDirectories: []string{"/a", "/b\tc"}},
		usage: usageCache{known: true, has: true, u: ContextUsage{Turn: 2, Step: 3, Model: "m", Used: 10, Size: 20, Cost: &Cost{Amount: 0.25, Currency: "USD"}}}}
	line := encodeEntry("dir/s.jsonl", e)
	rel, got, ok := decodeEntry(strings.TrimSuffix(line, "\n"))
	e.info.UpdatedAt = 1_700_000_000_123
	if !ok || rel != "dir/s.jsonl" || !reflect.DeepEqual(got, e) {
		t.Errorf("round trip of %q:\n got %q %+v %v\nwant %+v", line, rel, got, ok, e)
	}
	for _, bad := range []string{"", "F\tdir\t5", strings.Replace(line, "\t12\t", "\tx\t", 1), "E\t../x.jsonl" + line[len("E\tdir/s.jsonl"):len(line)-1], line[:len(line)/2]} {
		if _, _, ok := decodeEntry(strings.TrimSuffix(bad, "\n")); ok {
			t.Errorf("decodeEntry(%q) accepted it", bad)
		}
	}
}

// TestIndexTrustedFolders: folders whose time is old and unchanged are
// not read again, by a new Index either (it takes their logs from the
// index file); a log created or deleted, or a title file replaced, in
// such a folder changes its time, and every listing equals a full read.
func TestIndexTrustedFolders(t *testing.T) {
	f := indexFixture{t, t.TempDir()}
	var paths []string
	for i := range 30 {
		paths = append(paths, f.write(fmt.Sprintf("s%02d", i), fmt.Sprintf("/w/%d", i%3), fmt.Sprintf("T%d", i), int64(1000+i)))
	}
	old := func() {
		for i := range 3 {
			at := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Dir(LogPath(f.root, fmt.Sprintf("/w/%d", i), "x")), at, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	old()
	var a Index
	f.check(&a, "")
	var b Index
	if _, reads := f.check(&b, ""); reads != 0 {
		t.Errorf("a new Index read %d logs of unchanged folders", reads)
	}
	if len(b.disk[filepath.Clean(f.root)].folders) != 3 {
		t.Errorf("folders trusted: %v", b.disk[filepath.Clean(f.root)].folders)
	}
	old()
	f.check(&b, "") // records the new times
	f.write("new", "/w/1", "N", 5000)
	os.Remove(paths[0])
	if err := WriteTitleFile(paths[5], Title{Title: "Renamed"}); err != nil {
		t.Fatal(err)
	}
	got, _ := f.check(&b, "")
	if len(got) != 30 || got[0].ID != "new" {
		t.Errorf("after the changes: %d sessions, first %q", len(got), got[0].ID)
	}
	var c Index
	for _, cwd := range []string{"", "/w/0", "/w/1", "/w/2"} {
		f.check(&c, cwd)
	}
}
