package session

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Info describes one logged session, as listed.
type Info struct {
	ID  string
	Cwd string
	// AdditionalDirectories are the workspace roots the session was
	// created with (the header's; a later Directories event is not read
	// here).
	AdditionalDirectories []string
	// Title is the session's title: its log's title file (TitlePath),
	// else the Title event among the log's first lines (logs written
	// before title files), "" when it has none yet.
	Title string
	// CreatedAt is the header's time, UpdatedAt the log file's last
	// modification (its last append); both Unix milliseconds.
	CreatedAt, UpdatedAt int64
	Path                 string
}

// ErrNotFound is returned by Find for a session with no log.
var ErrNotFound = errors.New("session: no such session")

// Find returns the path of session id's log under root, whatever its cwd.
// It returns an error wrapping ErrNotFound when there is none.
func Find(root, id string) (string, error) {
	matches, err := filepath.Glob(filepath.Join(root, "*", encodeID(id)+".jsonl"))
	if err != nil {
		return "", fmt.Errorf("session: looking for %q: %w", id, err)
	}
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() {
			return m, nil
		}
	}
	return "", fmt.Errorf("session %q: %w", id, ErrNotFound)
}

// Delete removes the session log at path and every file beside it that
// belongs to it: the backups crash repair made (BackupPath), a repair's
// temporary file left by a crash, its title file (TitlePath, and a
// temporary one), its archive mark (ArchivedPath) and its lock file
// (LockPath). It takes
// the log's Lock first, so a log another process has open is not
// removed (a *LockedError); the lock file goes last, while held (a
// process that opens it afterwards finds no log to lock). The log is
// removed first, so a crash midway leaves no listed session. A missing
// log is an error wrapping ErrNotFound; nothing is removed then. What a
// crash after the log's removal leaves, Sweep removes at the next
// start. The
// caller closes its own Log of path first (a Log holds the lock, and
// only ever creates its file on its first Append, so a closed one never
// brings it back).
func Delete(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("session log %s: %w", path, ErrNotFound)
	}
	lock, err := Acquire(path)
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := os.Remove(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("session log %s: %w", path, ErrNotFound)
		}
		return fmt.Errorf("session: deleting %s: %w", path, err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("session: deleting the backups of %s: %w", path, err)
	}
	var names []string
	for _, e := range entries {
		if b, ok := sidecarOf(e.Name()); ok && b == filepath.Base(path) {
			names = append(names, e.Name())
		}
	}
	if _, err := removeCompanions(path, names); err != nil {
		return fmt.Errorf("session: deleting the backups of %s: %w", path, err)
	}
	return nil
}

// isBackupOf reports whether the file name n is a BackupPath of the log
// named base: base + "." + digits + ".bak".
func isBackupOf(n, base string) bool {
	ms, ok := strings.CutPrefix(n, base+".")
	if !ok {
		return false
	}
	ms, ok = strings.CutSuffix(ms, ".bak")
	if !ok || ms == "" {
		return false
	}
	for i := 0; i < len(ms); i++ {
		if ms[i] < '0' || ms[i] > '9' {
			return false
		}
	}
	return true
}

// List returns the sessions logged under root, newest first (by
// UpdatedAt, then ID): all of them, or, when cwd is non-empty, those whose
// logged cwd equals cwd. Only a log's header and first lines are read. A
// log without a valid header is skipped; a missing root gives no
// sessions and no error. It reads every log each time (and neither reads
// nor writes the list index, IndexFile); an Index reads only the logs
// that changed since its last call or its index file's entry.
func List(root, cwd string) ([]Info, error) {
	x := Index{noDisk: true}
	return x.List(root, cwd)
}

// listFolders returns the folders whose logs List(root, cwd) looks at:
// cwd's (whether or not it exists), or every entry of root, joined to the
// clean root as filepath.Glob joins them (those that are not directories
// give no logs).
func listFolders(root, cwd string) []string {
	root = filepath.Clean(root)
	if cwd != "" {
		return []string{filepath.Join(root, cwdDir(cwd))}
	}
	var dirs []string
	for _, n := range readNames(root) {
		dirs = append(dirs, filepath.Join(root, n))
	}
	return dirs
}

// logsIn returns the paths of the logs in folder dir (names ending in
// .jsonl, as the glob of listPattern matches them), one directory read,
// no pattern matching or sorting.
func logsIn(dir string) []string {
	var out []string
	for _, n := range readNames(dir) {
		if strings.HasSuffix(n, ".jsonl") {
			out = append(out, dir+string(filepath.Separator)+n)
		}
	}
	return out
}

// readNames lists the names in directory dir; nil when it cannot be
// read (or is not a directory).
func readNames(dir string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	return names
}

// listPattern is the glob of the logs List looks at (it keys what an
// Index has looked at).
func listPattern(root, cwd string) string {
	if cwd != "" {
		return filepath.Join(root, cwdDir(cwd), "*.jsonl")
	}
	return filepath.Join(root, "*", "*.jsonl")
}

// sortInfos orders infos as List returns them: newest first, then by ID.
func sortInfos(out []Info) { slices.SortFunc(out, compareInfo) }

// compareInfo is List's order: a before b when a was updated later, or
// at the same time with a smaller ID.
func compareInfo(a, b Info) int {
	if c := cmp.Compare(b.UpdatedAt, a.UpdatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// titleScanLines bounds how many event lines readInfo looks at for the
// title (it comes right after the first TurnStart).
const titleScanLines = 8

// infoBufSize is how much of a log readInfo reads at first: the header
// and the first event lines, where the title is, fit in it; a longer
// line is skipped piece by piece.
const infoBufSize = 8 << 10

// readInfo reads a log's header and title through r (reset to the file;
// nil makes one); ok is false when the file is not a readable log. st is
// the open file's own status, read before its lines (nil when it could
// not be opened or stat'ed): the size and modification time the Info
// was read at.
func readInfo(path string, r *bufio.Reader) (info Info, st os.FileInfo, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return info, nil, false
	}
	defer f.Close()
	st, err = f.Stat()
	if err != nil {
		return info, nil, false
	}
	if !st.Mode().IsRegular() {
		return info, st, false
	}
	if r == nil {
		r = bufio.NewReaderSize(f, infoBufSize)
	} else {
		r.Reset(f)
		defer r.Reset(nil)
	}
	line, err := r.ReadSlice('\n')
	if err != nil {
		return info, st, false
	}
	var h Header
	if parseHeader(line, &h) != nil {
		return info, st, false
	}
	info = Info{ID: h.ID, Cwd: h.Cwd, AdditionalDirectories: h.AdditionalDirectories, CreatedAt: h.CreatedAt,
		UpdatedAt: st.ModTime().UnixMilli(), Path: path}
	if t, ok := ReadTitleFile(path); ok {
		info.Title = t.Title
		return info, st, true
	}
	for range titleScanLines {
		line, err := r.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		switch lineType(line) {
		case "session/title":
			var ev struct {
				Data Title `json:"data"`
			}
			if err == nil && json.Unmarshal(line, &ev) == nil {
				info.Title = ev.Data.Title
			}
			return info, st, true
		case "user/message", "turn/end":
			return info, st, true
		}
		for errors.Is(err, bufio.ErrBufferFull) { // skip the rest of a long line
			_, err = r.ReadSlice('\n')
		}
	}
	return info, st, true
}

// lineType is the "type" of an event line as this package writes it
// (`{"type":"...`), or "" when the line does not start that way.
func lineType(line []byte) string {
	const prefix = `{"type":"`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return ""
	}
	rest := line[len(prefix):]
	i := bytes.IndexByte(rest, '"')
	if i < 0 {
		return ""
	}
	return string(rest[:i])
}

// usageScanLimit bounds, in bytes, how far back from its end LastUsage
// reads a log.
const usageScanLimit = 1 << 20

// LastUsage returns the last ContextUsage event of the log at path (the
// session's context use and cumulative cost as last reported), reading
// the file backwards from its end in 64 KiB blocks, at most its last
// 1 MiB; ok is false when there is none in that part, or the file cannot
// be read.
func LastUsage(path string) (u ContextUsage, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return u, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return u, false
	}
	const block = 64 << 10
	end := st.Size()
	floor := max(end-usageScanLimit, 0)
	var carry []byte // the start of a line cut by the previous block's start
	for end > floor {
		start := max(end-block, floor)
		buf := make([]byte, int(end-start)+len(carry))
		if _, err := f.ReadAt(buf[:end-start], start); err != nil {
			return u, false
		}
		copy(buf[end-start:], carry)
		// Whole lines, last first; the first one is whole only when the
		// block starts the file.
		rest := buf
		for {
			i := bytes.LastIndexByte(rest, '\n')
			if i < 0 && start > 0 {
				break
			}
			line := rest[i+1:]
			if lineType(line) == "usage/update" {
				var ev Event
				if json.Unmarshal(line, &ev) == nil {
					if cu, isUsage := ev.Data.(ContextUsage); isUsage {
						return cu, true
					}
				}
			}
			if i < 0 {
				break
			}
			rest = rest[:i]
		}
		carry = append([]byte(nil), rest...)
		end = start
	}
	return u, false
}
