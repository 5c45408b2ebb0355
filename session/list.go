package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Info describes one logged session, as listed.
type Info struct {
	ID  string
	Cwd string
	// Title is the session's Title event, "" when it has none yet.
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

// List returns the sessions logged under root, newest first (by
// UpdatedAt, then ID): all of them, or, when cwd is non-empty, those whose
// logged cwd equals cwd. Only a log's header and first lines are read. A
// log without a valid header is skipped; a missing root gives no
// sessions and no error.
func List(root, cwd string) ([]Info, error) {
	pattern := filepath.Join(root, "*", "*.jsonl")
	if cwd != "" {
		pattern = filepath.Join(root, cwdDir(cwd), "*.jsonl")
	}
	paths, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("session: listing %s: %w", root, err)
	}
	out := make([]Info, 0, len(paths))
	for _, p := range paths {
		info, ok := readInfo(p)
		if !ok || (cwd != "" && info.Cwd != cwd) {
			continue
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].UpdatedAt != out[j].UpdatedAt {
			return out[i].UpdatedAt > out[j].UpdatedAt
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// titleScanLines bounds how many event lines readInfo looks at for the
// title (it comes right after the first TurnStart).
const titleScanLines = 8

// readInfo reads a log's header and title; ok is false when the file is
// not a readable log.
func readInfo(path string) (info Info, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return info, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return info, false
	}
	r := bufio.NewReaderSize(f, 16<<10)
	line, err := r.ReadSlice('\n')
	if err != nil {
		return info, false
	}
	var h Header
	if parseHeader(line, &h) != nil {
		return info, false
	}
	info = Info{ID: h.ID, Cwd: h.Cwd, CreatedAt: h.CreatedAt, UpdatedAt: st.ModTime().UnixMilli(), Path: path}
	for range titleScanLines {
		line, err := r.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		switch lineType(line) {
		case "session/title":
			var ev Event
			if err == nil && json.Unmarshal(line, &ev) == nil {
				if t, ok := ev.Data.(Title); ok {
					info.Title = t.Title
				}
			}
			return info, true
		case "user/message", "turn/end":
			return info, true
		}
		for errors.Is(err, bufio.ErrBufferFull) { // skip the rest of a long line
			_, err = r.ReadSlice('\n')
		}
	}
	return info, true
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
