package toolfs

import (
	"encoding/json"
	"fmt"

	"github.com/dsh-acp/dsh-acp/hunks"
	"github.com/dsh-acp/dsh-acp/tools"
)

// MaxDiffBytes bounds the diff text of one result card and of its Meta:
// the bytes of OldText plus NewText over the diffs shown. Hunks past the
// bound are left out (never cut), and a note says how many.
const MaxDiffBytes = 1 << 20

// The operations a Meta records.
const (
	OpCreate    = "create"    // a new file; the card's diff comes from the content argument
	OpUpdate    = "update"    // an existing file changed; Diffs holds the applied hunks
	OpUnchanged = "unchanged" // the content was already there; no diff
)

// Meta is the result Meta of write and edit (JSON, kept in the session
// log): what the result card shows, already bounded, with absolute paths.
// Diffs has one entry per applied hunk (OpUpdate), Locations one per
// change inside the diffs shown (hunks.Hunk.ChangeLines: the new-file
// line, 1-based, of each run of changed lines, so two changes that share
// a hunk get a location each; for a create, line 1; for OpUnchanged, the
// path without a line), Note the final text when hunks were left out.
type Meta struct {
	Op        string               `json:"op"`
	Path      string               `json:"path"`
	Diffs     []tools.FileDiff     `json:"diffs,omitempty"`
	Locations []tools.FileLocation `json:"locations,omitempty"`
	Note      string               `json:"note,omitempty"`
}

// hunkMeta builds the OpUpdate Meta of path's applied hunks, bounded to
// MaxDiffBytes.
func hunkMeta(path string, hs []hunks.Hunk) Meta {
	m := Meta{Op: OpUpdate, Path: path}
	size := 0
	for i, h := range hs {
		n := len(h.NewText)
		if h.OldText != nil {
			n += len(*h.OldText)
		}
		if size+n > MaxDiffBytes {
			m.Note = leftOutNote(hs[i:])
			break
		}
		size += n
		m.Diffs = append(m.Diffs, tools.FileDiff{Path: path, OldText: h.OldText, NewText: h.NewText})
		for _, line := range h.ChangeLines() {
			m.Locations = append(m.Locations, tools.FileLocation{Path: path, Line: line})
		}
	}
	return m
}

// leftOutNote says how many hunks and changed lines a card leaves out.
func leftOutNote(rest []hunks.Hunk) string {
	removed, added := 0, 0
	for _, h := range rest {
		r, a := h.Changed()
		removed, added = removed+r, added+a
	}
	return noteText(len(rest), removed, added)
}

func noteText(hunkCount, removed, added int) string {
	noun := "hunks"
	if hunkCount == 1 {
		noun = "hunk"
	}
	return fmt.Sprintf("%d more %s not shown (%d removed and %d added lines): the change passes the %d KiB a card shows.",
		hunkCount, noun, removed, added, MaxDiffBytes>>10)
}

// createDiff is the card of a new file holding content: one diff with no
// old text, or, past MaxDiffBytes, none and a note.
func createDiff(path, content string) ([]tools.FileDiff, string) {
	if len(content) > MaxDiffBytes {
		return nil, noteText(1, 0, countLines([]byte(content)))
	}
	return []tools.FileDiff{{Path: path, NewText: content}}, ""
}

// marshalMeta encodes m (it cannot fail: plain strings and ints).
func marshalMeta(m Meta) json.RawMessage {
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// parseMeta decodes a result's Meta softly: ok is false for a missing or
// malformed one (an older log, another tool's), never an error. A Meta is
// well formed when Op is known, Path is set and every diff and location
// names a path.
func parseMeta(raw json.RawMessage) (Meta, bool) {
	var m Meta
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m.Path == "" {
		return Meta{}, false
	}
	switch m.Op {
	case OpCreate, OpUpdate, OpUnchanged:
	default:
		return Meta{}, false
	}
	for _, d := range m.Diffs {
		if d.Path == "" {
			return Meta{}, false
		}
	}
	for _, l := range m.Locations {
		if l.Path == "" || l.Line < 0 {
			return Meta{}, false
		}
	}
	return m, true
}
