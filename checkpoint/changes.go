package checkpoint

import (
	"errors"
	"sort"

	"github.com/dsh-acp/dsh-acp/hunks"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// The bounds of a changes card (the log keeps what it shows).
const (
	// MaxFiles is how many changed files a card lists; the rest are
	// counted.
	MaxFiles = 100
	// MaxDiffBytes bounds the hunk text of a card (old plus new text over
	// every diff shown); a file whose hunks would pass it is listed
	// without them.
	MaxDiffBytes = 1 << 20
	// MaxFileBytes is the largest file whose content is read to diff it;
	// a larger one is listed as too large.
	MaxFileBytes = 4 << 20
)

// fileChange is one changed file as found, before it becomes a card
// entry: its absolute path, its text on each side (nil where it does not
// exist), and a note replacing the diff when the content is not known.
type fileChange struct {
	path     string
	old, new []byte
	oldOK    bool // the file existed before
	newOK    bool // the file exists after
	note     string
	binary   bool
}

// changesOf builds the card data of a turn's file changes (nil when
// there are none).
func changesOf(turn int, fcs []fileChange) *session.TurnChanges {
	if len(fcs) == 0 {
		return nil
	}
	sort.Slice(fcs, func(i, j int) bool { return fcs[i].path < fcs[j].path })
	d := &session.TurnChanges{Turn: turn}
	if len(fcs) > MaxFiles {
		d.More = len(fcs) - MaxFiles
		fcs = fcs[:MaxFiles]
	}
	budget := MaxDiffBytes
	for _, fc := range fcs {
		f := fileEntry(fc, &budget)
		d.Added += f.Added
		d.Removed += f.Removed
		d.Files = append(d.Files, f)
	}
	return d
}

// fileEntry is the card entry of fc, its hunks taken from budget.
func fileEntry(fc fileChange, budget *int) session.ChangedFile {
	f := session.ChangedFile{Path: fc.path, Status: session.FileModified, Note: fc.note, Binary: fc.binary}
	switch {
	case !fc.oldOK:
		f.Status = session.FileCreated
	case !fc.newOK:
		f.Status = session.FileDeleted
	}
	if fc.note != "" || fc.binary {
		return f
	}
	hs, err := hunks.Compute(fc.old, fc.new)
	if errors.Is(err, hunks.ErrBinary) {
		f.Binary = true
		return f
	}
	size := 0
	for _, h := range hs {
		r, a := h.Changed()
		f.Removed, f.Added = f.Removed+r, f.Added+a
		size += len(h.NewText)
		if h.OldText != nil {
			size += len(*h.OldText)
		}
	}
	if size > *budget {
		f.Note = "too large to show here"
		return f
	}
	*budget -= size
	switch {
	case !fc.oldOK:
		f.Diffs = []tools.FileDiff{{Path: fc.path, NewText: string(fc.new)}}
		f.Line = 1
		return f
	case !fc.newOK:
		old := string(fc.old)
		f.Diffs = []tools.FileDiff{{Path: fc.path, OldText: &old}}
		return f
	}
	for _, h := range hs {
		f.Diffs = append(f.Diffs, tools.FileDiff{Path: fc.path, OldText: h.OldText, NewText: h.NewText})
	}
	if len(hs) > 0 {
		f.Line = hs[0].FirstChange
	}
	return f
}
