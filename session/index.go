package session

import (
	"bufio"
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Index lists logged sessions like List, but remembers what it read, so
// that paging through `session/list` reads each log once in all:
//
//   - List, and Page from the start, look at every log under the root (a
//     directory walk and one stat per log) and read only the logs that are
//     new or whose size or modification time changed since the Index last
//     read them; logs that are gone are forgotten.
//   - Page after a position (the next page of a walk) looks only at the
//     logs the Index knows to come after it, in order, one stat each,
//     until the page is full (one more tells whether more follow): a log
//     that is gone is left out, a log that changed is read again and left
//     out when it moved ahead of the position. The rest of the walk
//     neither shifts nor repeats.
//
// Later pages rely on the clock: a log created or changed after a page
// was served has a modification time newer than every session that page
// showed, so it sorts ahead of the position and belongs to the next walk
// from the start, not to this one. A log given an older time (a restored
// copy, `touch -d`) may be missed by a walk already under way; the next
// walk from the start shows it. A log rewritten to the same size within
// the same modification time is not noticed (crash repair changes the
// size).
//
// The zero value is an empty index, ready to use; an Index is safe for
// concurrent use (calls are served one at a time). It holds one entry per
// log it has seen, forgotten when the log is gone.
type Index struct {
	mu      sync.Mutex
	entries map[string]indexEntry // by log path
	listed  map[string]bool       // the listPatterns a full look has covered
	buf     *bufio.Reader         // reused by every read
	disk    map[string]*diskIndex // the index files, by root (diskindex.go)
	noDisk  bool                  // List's: no index file is read or written
	// gen counts the changes of entries (one added, replaced or
	// forgotten); orders holds, by listPattern, the order of the logs of
	// the last look from the start, valid while gen is what it was then.
	gen    int
	orders map[string]listOrder
	// reads and stats count the logs read and stat'ed, for the tests.
	reads, stats int
}

// indexEntry is what the Index knows of one log file: the size and
// modification time (Unix ns) it was read at, its title file's (see
// titleStamp), and what the read gave (ok false: not a valid log; skipped
// until it changes).
type indexEntry struct {
	size, mtime int64
	title       int64 // titleStamp when read
	info        Info
	ok          bool
	usage       usageCache
}

// usageCache is what LastUsage gave for a log at an entry's size and
// time: known once looked for, has when there was one (u).
type usageCache struct {
	known, has bool
	u          ContextUsage
}

// List returns what List(root, cwd) returns, reading only the logs that
// are new or changed since this Index last read them. Errors are List's.
func (x *Index) List(root, cwd string) ([]Info, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	defer x.saveDisk(root)
	return x.refresh(root, cwd)
}

// LastUsage returns what LastUsage(path) returns, from the Index when it
// looked it up at the log's present size and time (Page does for the
// sessions it returns), else from the log.
func (x *Index) LastUsage(path string) (ContextUsage, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if e, hit := x.entries[path]; hit && e.usage.known {
		return e.usage.u, e.usage.has
	}
	return LastUsage(path)
}

// lookUsage fills the usage of the entries of infos that have none yet
// (x.mu held): LastUsage of the log, kept when the log still has the
// entry's size and time afterwards.
func (x *Index) lookUsage(infos []Info) {
	for _, in := range infos {
		e, hit := x.entries[in.Path]
		if !hit || e.usage.known {
			continue
		}
		u, has := LastUsage(in.Path)
		st, err := os.Stat(in.Path)
		if err != nil || st.Size() != e.size || st.ModTime().UnixNano() != e.mtime {
			continue
		}
		e.usage = usageCache{known: true, has: has, u: u}
		x.entries[in.Path] = e
		x.dirtyPath(in.Path)
	}
}

// Page returns at most n sessions of List(root, cwd) that come after a
// position in its order, and whether more follow them. after reports
// whether a session lies after the position (it must be false up to some
// point of List's order and true from there on, as a cursor's "older, or
// as old with a greater ID" is); nil means from the start, which looks at
// every log like List. With a position, only the logs known to come after
// it are looked at (see Index); a position met before any look from the
// start of this root and cwd makes one first. Errors are List's.
func (x *Index) Page(root, cwd string, after func(Info) bool, n int) ([]Info, bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	page, more, err := x.page(root, cwd, after, n)
	if err == nil {
		x.lookUsage(page)
		x.saveDisk(root)
	}
	return page, more, err
}

// page is Page's work (x.mu held).
func (x *Index) page(root, cwd string, after func(Info) bool, n int) ([]Info, bool, error) {
	if after == nil || !x.listed[listPattern(root, cwd)] {
		all, err := x.refresh(root, cwd)
		if err != nil {
			return nil, false, err
		}
		start := 0
		for after != nil && start < len(all) && !after(all[start]) {
			start++
		}
		rest := all[start:]
		if len(rest) > n {
			return rest[:n:n], true, nil
		}
		return rest, false, nil
	}
	page, more := x.pageAfter(root, cwd, after, n)
	return page, more, nil
}

// pageAfter is Page after a position, for a root and cwd already looked
// at from the start.
func (x *Index) pageAfter(root, cwd string, after func(Info) bool, n int) ([]Info, bool) {
	if o, ok := x.orders[listPattern(root, cwd)]; ok && o.gen == x.gen {
		if page, more, ok := x.pageInOrder(o.paths, after, n); ok {
			return page, more
		}
	}
	// cand is a log to look at, with the place the Index knows it at.
	type cand struct {
		at   int64
		id   string
		path string
	}
	in := x.scope(root, cwd)
	var cands []cand
	for p, e := range x.entries {
		if e.ok && in(p) && (cwd == "" || e.info.Cwd == cwd) && after(e.info) {
			cands = append(cands, cand{e.info.UpdatedAt, e.info.ID, p})
		}
	}
	byOrder := func(a, b cand) int {
		if c := cmp.Compare(b.at, a.at); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	}
	slices.SortFunc(cands, byOrder)
	checked := make(map[string]bool, n+1)
	for {
		page := make([]Info, 0, min(n, len(cands)))
		changed := false
		for i := 0; i < len(cands); i++ {
			c := &cands[i]
			e := x.entries[c.path]
			if !checked[c.path] {
				checked[c.path] = true
				var exists, fresh bool
				e, exists, fresh = x.revalidate(c.path, true)
				if !exists || !e.ok || (cwd != "" && e.info.Cwd != cwd) || !after(e.info) {
					cands = slices.Delete(cands, i, i+1)
					i--
					continue
				}
				if fresh {
					// Its place may have changed: order again, walk again
					// (what is checked stays checked).
					c.at, c.id = e.info.UpdatedAt, e.info.ID
					changed = true
					break
				}
			}
			if len(page) == n {
				return page, true
			}
			page = append(page, e.info)
		}
		if !changed {
			return page, false
		}
		slices.SortFunc(cands, byOrder)
	}
}

// refresh looks at every log of root (those of cwd's folder when cwd is
// set) and returns List's answer.
func (x *Index) refresh(root, cwd string) ([]Info, error) {
	pattern := listPattern(root, cwd)
	if x.entries == nil {
		x.entries = map[string]indexEntry{}
		x.listed = map[string]bool{}
	}
	x.loadDisk(root)
	folders := listFolders(root, cwd)
	changed := x.foldersChanged(root, folders)
	paths := x.folderLogs(folders, changed)
	out := make([]Info, 0, len(paths))
	seen := make(map[string]bool, len(paths))
	stats := statAll(paths)
	for i, p := range paths {
		seen[p] = true
		e, exists, _ := x.revalidateStat(p, stats[i], changed[filepath.Dir(p)])
		if exists && e.ok && (cwd == "" || e.info.Cwd == cwd) {
			out = append(out, e.info)
		}
	}
	// Forget the logs this look covered that are gone.
	in := x.scope(root, cwd)
	for p := range x.entries {
		if !seen[p] && in(p) {
			delete(x.entries, p)
			x.gen++
		}
	}
	x.listed[pattern] = true
	sortInfos(out)
	if x.orders == nil {
		x.orders = map[string]listOrder{}
	}
	o := listOrder{gen: x.gen, paths: make([]string, len(out))}
	for i, in := range out {
		o.paths[i] = in.Path
	}
	x.orders[pattern] = o
	return out, nil
}

// scope returns whether a log path is one that List(root, cwd) looks at:
// in cwd's folder, or (no cwd) in any folder of root. The paths are the
// ones listFolders and logsIn give (clean, joined with the
// separator).
func (x *Index) scope(root, cwd string) func(p string) bool {
	parent := func(p string) string { return p[:max(strings.LastIndexByte(p, filepath.Separator), 0)] }
	if cwd != "" {
		dir := filepath.Join(root, cwdDir(cwd))
		return func(p string) bool { return parent(p) == dir }
	}
	root = filepath.Clean(root)
	return func(p string) bool { return parent(parent(p)) == root }
}

// revalidate returns the entry of the log at p, reading the log when the
// Index has no entry for it, the file's size or modification time
// changed, or (checkTitle) its title file is not the one the entry was
// read with (fresh is then true). exists is false when the file cannot be
// opened or stat'ed; it is then forgotten.
func (x *Index) revalidate(p string, checkTitle bool) (e indexEntry, exists, fresh bool) {
	var st logStat
	if _, hit := x.entries[p]; hit {
		st = statLog(p)
	}
	return x.revalidateStat(p, st, checkTitle)
}

// revalidateStat is revalidate with the log's stat taken already (st;
// only looked at when the Index has an entry for p).
func (x *Index) revalidateStat(p string, st logStat, checkTitle bool) (e indexEntry, exists, fresh bool) {
	if e, hit := x.entries[p]; hit {
		x.stats++
		if st.err != nil {
			delete(x.entries, p)
			x.gen++
			return indexEntry{}, false, false
		}
		if st.size == e.size && st.mtime == e.mtime && (!checkTitle || titleStamp(p) == e.title) {
			return e, true, false
		}
	}
	x.reads++
	if x.buf == nil {
		x.buf = bufio.NewReaderSize(nil, infoBufSize)
	}
	title := titleStamp(p) // before the read: a newer file is seen next time
	info, fi, ok := readInfo(p, x.buf)
	x.gen++
	if fi == nil {
		delete(x.entries, p)
		return indexEntry{}, false, false
	}
	e = indexEntry{size: fi.Size(), mtime: fi.ModTime().UnixNano(), title: title, info: info, ok: ok}
	x.entries[p] = e
	x.dirtyPath(p)
	return e, true, true
}

// listOrder is the order of the logs a look from the start listed
// (their paths, List's order), valid while the Index's gen is gen: no
// entry was added, replaced or forgotten since.
type listOrder struct {
	gen   int
	paths []string
}

// pageInOrder is pageAfter when the order of the last look still holds:
// the position is found by binary search (after is false, then true,
// along List's order) and only the logs of the page and the one after
// it are checked. ok is false, for pageAfter's full walk, when one of
// them changed or is gone.
func (x *Index) pageInOrder(paths []string, after func(Info) bool, n int) (page []Info, more, ok bool) {
	start := sort.Search(len(paths), func(i int) bool { return after(x.entries[paths[i]].info) })
	for _, p := range paths[start:] {
		e, exists, fresh := x.revalidate(p, true)
		if !exists || fresh || !e.ok {
			return nil, false, false
		}
		if len(page) == n {
			return page, true, true
		}
		page = append(page, e.info)
	}
	return page, false, true
}
