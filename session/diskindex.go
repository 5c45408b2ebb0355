package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The list index on disk: IndexFile in the state directory keeps what an
// Index read of each log (the header's fields, the title, the last usage),
// with the size and modification time it was read at, so that a new
// process lists 10,000 sessions with one stat per log instead of reading
// every log. It is a cache and never the truth: an entry counts only while
// its log still has that size and time (so a log written by any process,
// an older build or crash repair included, is read again), a log missing
// from it is read, a line that does not parse is ignored, and a missing
// or foreign file is rebuilt.
//
// The file is a header line, then one line per log, tab-separated (see
// encodeEntry); a later line for the same log replaces an earlier one.
// An Index appends the lines of what it read anew (one write, O_APPEND)
// and rewrites the whole file (a temporary file renamed over it) when
// the lines outnumber the logs by half, the header is not ours, or a
// folder's recorded time changed. A folder line ("F", its path, its
// modification time) says the entries of every log in the folder then
// are in the file: a process that finds the folder's time unchanged
// takes its logs from the file and does not read the folder.
// Two processes may do both at once: a line lost to a rename, or torn by a
// crash, only costs a read later.

// IndexFile is the list index's name in the state directory.
const IndexFile = ".list-index"

// indexHeader is the first line of a list index this package writes.
const indexHeader = "dsh-acp list index 1"

// diskIndex is what an Index knows of one root's file.
type diskIndex struct {
	lines int             // lines in the file (0: no usable file)
	dirty map[string]bool // logs (paths) read anew, not in the file yet
	// folders holds, by folder path, the modification time (Unix ns) the
	// folder had when every title stamp of its entries was last checked;
	// foldersDirty is set when that changed since the file was written.
	folders      map[string]int64
	foldersDirty bool
}

// titleStamp is the modification time (Unix ns) of the title file of the
// log at p, 0 when it has none (-1 when it cannot be stat'ed otherwise).
// This package replaces a title file by a rename, so a new one has a new
// time, and its folder a new modification time too (foldersChanged).
func titleStamp(p string) int64 {
	st, err := os.Stat(TitlePath(p))
	switch {
	case err == nil:
		return st.ModTime().UnixNano()
	case errors.Is(err, os.ErrNotExist):
		return 0
	}
	return -1
}

// racyFolder is how recent a folder's modification time may be and still
// be trusted: a title file replaced within the same clock tick as the
// recorded time would leave it unchanged.
const racyFolder = 2 * time.Second

// foldersChanged stats folders (of logs under root) and returns those
// whose modification time differs from the one recorded, or that cannot be
// stat'ed (x.mu held). In a folder whose time did not change no log or
// title file was created, replaced or removed: its logs are the ones the
// Index knows (folderLogs) and their title stamps hold. The new times are
// recorded, unless too recent to be trusted (racyFolder); each is taken
// before the folder is read, so a later change shows next time.
func (x *Index) foldersChanged(root string, folders []string) map[string]bool {
	d := x.loadDisk(root)
	changed := map[string]bool{}
	now := time.Now()
	for _, dir := range folders {
		st, err := os.Stat(dir)
		rec, had := d.folders[dir]
		if err == nil && had && rec == st.ModTime().UnixNano() {
			continue
		}
		changed[dir] = true
		switch {
		case err == nil && now.Sub(st.ModTime()) > racyFolder:
			d.folders[dir] = st.ModTime().UnixNano()
			d.foldersDirty = true
		case had:
			delete(d.folders, dir)
			d.foldersDirty = true
		}
	}
	return changed
}

// folderLogs returns the logs of folders: read from the folder when it
// changed, else the ones the Index holds entries for (x.mu held).
func (x *Index) folderLogs(folders []string, changed map[string]bool) []string {
	var paths []string
	var known map[string][]string
	for _, dir := range folders {
		if changed[dir] {
			paths = append(paths, logsIn(dir)...)
			continue
		}
		if known == nil {
			known = map[string][]string{}
			for p := range x.entries {
				known[filepath.Dir(p)] = append(known[filepath.Dir(p)], p)
			}
		}
		paths = append(paths, known[dir]...)
	}
	return paths
}

// loadDisk fills x.entries with the entries of root's index file, once
// per root (x.mu held).
func (x *Index) loadDisk(root string) *diskIndex {
	root = filepath.Clean(root)
	if d, ok := x.disk[root]; ok {
		return d
	}
	if x.disk == nil {
		x.disk = map[string]*diskIndex{}
	}
	d := &diskIndex{dirty: map[string]bool{}, folders: map[string]int64{}}
	x.disk[root] = d
	if x.noDisk {
		return d
	}
	b, err := os.ReadFile(filepath.Join(root, IndexFile))
	if err != nil {
		return d
	}
	head, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok || string(head) != indexHeader {
		return d
	}
	d.lines = 1 // a file of ours: appends may follow
	if len(x.entries) == 0 {
		x.entries = make(map[string]indexEntry, bytes.Count(rest, []byte("\n")))
	}
	for len(rest) > 0 {
		line, more, whole := bytes.Cut(rest, []byte("\n"))
		rest = more
		if !whole {
			break // torn by a crash
		}
		d.lines++
		if !bytes.HasPrefix(line, []byte("F\t")) {
			// An entry line ("E\t..."), the usual kind.
		} else if rel, mt, ok := decodeFolder(string(line)); ok {
			d.folders[filepath.Join(root, rel)] = mt
			continue
		}
		rel, e, ok := decodeEntry(string(line))
		if !ok {
			continue
		}
		p := filepath.Join(root, rel)
		e.info.Path = p
		x.entries[p] = e // a later line replaces an earlier one
		x.gen++
	}
	return d
}

// dirtyPath notes that the entry of the log at path (root/folder/log)
// changed, for its root's index file.
func (x *Index) dirtyPath(path string) {
	if d := x.disk[filepath.Dir(filepath.Dir(path))]; d != nil {
		d.dirty[path] = true
	}
}

// saveDisk writes what root's entries gained to its index file (x.mu
// held): the lines of the dirty entries appended, or the whole file
// rewritten when it is missing, foreign or mostly stale. Errors are
// ignored (the index is a cache); nothing is written for a root that is
// not a directory.
func (x *Index) saveDisk(root string) {
	root = filepath.Clean(root)
	d := x.disk[root]
	if x.noDisk || d == nil || len(d.dirty) == 0 && !d.foldersDirty {
		return
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return
	}
	in := x.scope(root, "")
	live := 0
	for p := range x.entries {
		if in(p) {
			live++
		}
	}
	path := filepath.Join(root, IndexFile)
	// Folder lines go only into a whole file, where the entries of every
	// log of the folder are too (an appended line may be lost to another
	// process's rewrite: a folder line without them would hide a log).
	if d.lines == 0 || d.lines > live+live/2+64 || d.foldersDirty {
		var b strings.Builder
		b.WriteString(indexHeader + "\n")
		n := 1 + x.writeFolders(&b, root, d)
		for p, e := range x.entries {
			if in(p) {
				b.WriteString(encodeEntry(p[len(root)+1:], e))
				n++
			}
		}
		if replaceFile(path, []byte(b.String()), false) == nil {
			d.lines, d.dirty, d.foldersDirty = n, map[string]bool{}, false
		}
		return
	}
	var b strings.Builder
	n := 0
	for p := range d.dirty {
		if e, ok := x.entries[p]; ok {
			b.WriteString(encodeEntry(p[len(root)+1:], e))
			n++
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil && cerr == nil {
		d.lines += n
		d.dirty = map[string]bool{}
	}
}

// writeFolders writes the folder lines of d to b and returns how many:
// "F", the folder's path below root and its recorded time (Unix ns); a
// folder whose time is not trusted has time 0 (it differs from any).
func (x *Index) writeFolders(b *strings.Builder, root string, d *diskIndex) int {
	n := 0
	for dir, mt := range d.folders {
		if len(dir) > len(root)+1 && dir[:len(root)+1] == root+string(filepath.Separator) {
			b.WriteString("F\t" + escapeField(dir[len(root)+1:]) + "\t" + strconv.FormatInt(mt, 10) + "\n")
			n++
		}
	}
	return n
}

// decodeFolder parses a folder line; ok is false for any other line.
func decodeFolder(line string) (rel string, mtime int64, ok bool) {
	f := strings.Split(line, "\t")
	if len(f) != 3 || f[0] != "F" {
		return "", 0, false
	}
	rel, good := unescapeField(f[1])
	mt, err := strconv.ParseInt(f[2], 10, 64)
	if !good || err != nil || rel == "" || strings.Contains(rel, "..") || filepath.IsAbs(rel) {
		return "", 0, false
	}
	return rel, mt, true
}

// encodeEntry is the index line of the log at rel (its path below the
// root), ending in a newline. The fields, tab-separated, strings escaped
// (escapeField): "E", rel, size, mtime (Unix ns), the title stamp, ok
// (1/0), ID, Cwd, CreatedAt,
// Title, the number of additional directories and each of them, then
// the usage: "-" (not looked for yet), "0" (the log has none), or "1"
// followed by Turn, Step, Model, Used, Size and the cost ("-", or
// Amount and Currency).
func encodeEntry(rel string, e indexEntry) string {
	f := []string{"E", escapeField(rel), strconv.FormatInt(e.size, 10), strconv.FormatInt(e.mtime, 10),
		strconv.FormatInt(e.title, 10), "0"}
	if e.ok {
		f[5] = "1"
	}
	in := e.info
	f = append(f, escapeField(in.ID), escapeField(in.Cwd), strconv.FormatInt(in.CreatedAt, 10), escapeField(in.Title),
		strconv.Itoa(len(in.AdditionalDirectories)))
	for _, d := range in.AdditionalDirectories {
		f = append(f, escapeField(d))
	}
	switch u := e.usage; {
	case !u.known:
		f = append(f, "-")
	case !u.has:
		f = append(f, "0")
	default:
		f = append(f, "1", strconv.Itoa(u.u.Turn), strconv.Itoa(u.u.Step), escapeField(u.u.Model),
			strconv.FormatInt(u.u.Used, 10), strconv.FormatInt(u.u.Size, 10))
		if u.u.Cost == nil {
			f = append(f, "-")
		} else {
			f = append(f, strconv.FormatFloat(u.u.Cost.Amount, 'g', -1, 64), escapeField(u.u.Cost.Currency))
		}
	}
	return strings.Join(f, "\t") + "\n"
}

// errField stops decodeEntry at a field that does not parse.
var errField = errors.New("bad field")

// decodeEntry parses an index line (without its newline); ok is false
// when it is not one encodeEntry wrote. The entry's Info.UpdatedAt is the
// mtime in milliseconds, as readInfo gives it; Info.Path is left to the
// caller (root joined with rel).
func decodeEntry(line string) (rel string, e indexEntry, ok bool) {
	f := strings.Split(line, "\t")
	i := 0
	var err error
	str := func() string {
		if i >= len(f) {
			err = errField
			return ""
		}
		s, good := unescapeField(f[i])
		if !good {
			err = errField
		}
		i++
		return s
	}
	num := func() int64 {
		s := str()
		n, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil {
			err = errField
		}
		return n
	}
	if str() != "E" {
		return "", indexEntry{}, false
	}
	rel = str()
	e.size, e.mtime, e.title = num(), num(), num()
	e.ok = str() == "1"
	in := &e.info
	in.ID, in.Cwd, in.CreatedAt, in.Title = str(), str(), num(), str()
	nd := num()
	if err != nil || nd < 0 || nd > int64(len(f)) {
		return "", indexEntry{}, false
	}
	for range nd {
		in.AdditionalDirectories = append(in.AdditionalDirectories, str())
	}
	switch str() {
	case "-":
	case "0":
		e.usage.known = true
	case "1":
		e.usage.known, e.usage.has = true, true
		u := &e.usage.u
		u.Turn, u.Step, u.Model, u.Used, u.Size = int(num()), int(num()), str(), num(), num()
		if i < len(f) && f[i] == "-" {
			i++
		} else {
			amount, perr := strconv.ParseFloat(str(), 64)
			if perr != nil {
				err = errField
			}
			u.Cost = &Cost{Amount: amount, Currency: str()}
		}
	default:
		err = errField
	}
	if err != nil || i != len(f) || rel == "" || strings.Contains(rel, "..") || filepath.IsAbs(rel) {
		return "", indexEntry{}, false
	}
	in.UpdatedAt = time.Unix(0, e.mtime).UnixMilli()
	return rel, e, true
}

// escapeField escapes what would end a field or a line: backslash, tab,
// newline and carriage return, as \\, \t, \n and \r.
func escapeField(s string) string {
	if !strings.ContainsAny(s, "\\\t\n\r") {
		return s
	}
	r := strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)
	return r.Replace(s)
}

// unescapeField undoes escapeField; ok is false for an escape it never
// writes.
func unescapeField(s string) (string, bool) {
	if !strings.Contains(s, "\\") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i++; i >= len(s) {
			return "", false
		}
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		default:
			return "", false
		}
	}
	return b.String(), true
}
