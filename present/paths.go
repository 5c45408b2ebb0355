package present

import (
	"path/filepath"
	"strings"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// paths resolves what cards say about files, for one session's view:
// paths made absolute against the cwd, titles naming them relative to it,
// lines in the wire base. The one place where that happens. The zero
// memo is ready to use.
type paths struct {
	view View
	// memo remembers the last few paths resolved by abs (a call's cards
	// resolve the same paths again and again); next is the slot replaced
	// next.
	memo [4]struct{ in, out string }
	next int
}

// abs resolves a path against the session cwd (absolute paths are kept,
// cleaned; "" gives the cwd).
func (r *paths) abs(path string) string {
	if path == "" {
		return r.view.Cwd
	}
	for _, m := range r.memo {
		if m.in == path {
			return m.out
		}
	}
	var out string
	if filepath.IsAbs(path) || r.view.Cwd == "" {
		out = filepath.Clean(path)
	} else {
		out = filepath.Join(r.view.Cwd, path)
	}
	r.memo[r.next].in, r.memo[r.next].out = path, out
	r.next = (r.next + 1) % len(r.memo)
	return out
}

// title makes a card title one line and shows rawPath (fallbackPath when
// rawPath is ""), when absolute and inside the cwd (by path segment),
// relative to the cwd.
func (r *paths) title(title, rawPath, fallbackPath string) string {
	if rawPath == "" {
		rawPath = fallbackPath
	}
	title = oneLine(title)
	if rawPath == "" || r.view.Cwd == "" || !filepath.IsAbs(rawPath) {
		return title
	}
	rel, err := filepath.Rel(r.view.Cwd, rawPath)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return title
	}
	return strings.ReplaceAll(title, rawPath, rel)
}

// locations makes paths absolute and converts lines (1-based, 0 for
// none) to the wire base. A single location is stored in w.
func (r *paths) locations(w *card, locs []tools.FileLocation) []acp.ToolCallLocation {
	if len(locs) == 0 {
		return nil
	}
	if len(locs) == 1 {
		l := locs[0]
		w.loc[0] = acp.ToolCallLocation{Path: r.abs(l.Path)}
		if l.Line > 0 {
			w.line = l.Line - 1 + r.view.LineBase
			w.loc[0].Line = &w.line
		}
		return w.loc[:]
	}
	out := make([]acp.ToolCallLocation, 0, len(locs))
	for _, l := range locs {
		loc := acp.ToolCallLocation{Path: r.abs(l.Path)}
		if l.Line > 0 {
			n := l.Line - 1 + r.view.LineBase
			loc.Line = &n
		}
		out = append(out, loc)
	}
	return out
}

// diffItems makes one diff item per change, with an absolute path; a
// single one is stored in w.
func (r *paths) diffItems(w *card, diffs []tools.FileDiff) []acp.ToolCallContent {
	if len(diffs) == 0 {
		return nil
	}
	out := w.item[:0]
	if len(diffs) > 1 {
		out = make([]acp.ToolCallContent, 0, len(diffs))
	}
	for _, d := range diffs {
		out = append(out, acp.Diff{Path: r.abs(d.Path), OldText: d.OldText, NewText: d.NewText})
	}
	return out
}

func firstLocPath(l []tools.FileLocation) string {
	if len(l) == 0 {
		return ""
	}
	return l[0].Path
}

func firstDiffPath(d []tools.FileDiff) string {
	if len(d) == 0 {
		return ""
	}
	return d[0].Path
}

// oneLine cuts s at its first line break, marking the cut with "…".
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return strings.TrimRight(s[:i], " \t") + "…"
	}
	return s
}
