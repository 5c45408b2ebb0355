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
// cleaned; "" gives the cwd). With View.Resolve, a ".." after a symlink
// is the kernel's: the symlink target's parent ("link/../x" with link ->
// /a/b is /a/x), as the tools open it and name it in their results
// (toolfs), not the link's own directory that cleaning the text names,
// so a card never points at another file than the one the call uses.
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
	if res := r.view.Resolve; res != nil && r.view.Cwd != "" && hasParent(path) {
		if real := res(r.view.Cwd, path); filepath.IsAbs(real) && res(r.view.Cwd, out) != real {
			out = real
		}
	}
	r.memo[r.next].in, r.memo[r.next].out = path, out
	r.next = (r.next + 1) % len(r.memo)
	return out
}

// hasParent reports whether path has a ".." segment.
func hasParent(path string) bool {
	for _, seg := range strings.Split(filepath.ToSlash(path), "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// title makes a card title of the given kind one line and shows in it
// the first of paths (as the tool gave them: absolute, or relative to the
// cwd) that it contains: relative to the cwd
// when inside it (by path segment), absolute otherwise. So an absolute
// path inside the cwd is shortened, and a relative one that leads
// outside ("../x", "a/../../x") is shown absolute. In
// a title rendered as Markdown (markdownTitle) the path is shown
// Markdown-safe.
func (r *paths) title(kind acp.ToolKind, title string, paths ...string) string {
	for _, p := range paths {
		if p == "" {
			continue
		}
		// A tool may have made its path Markdown-safe itself: replace its
		// span, else the bare path.
		from := p
		if w := tools.MarkdownInline(p); w != p && strings.Contains(title, w) {
			from = w
		} else if !strings.Contains(title, p) {
			continue
		}
		shown := r.shown(p)
		if !markdownTitle(kind) {
			return oneLine(strings.ReplaceAll(title, p, shown))
		}
		// Its first appearance: the words around it are plain.
		return oneLine(strings.Replace(title, from, tools.MarkdownInline(shown), 1))
	}
	return oneLine(title)
}

// shown is how a title names path p (see title): p itself without a cwd.
func (r *paths) shown(p string) string {
	if r.view.Cwd == "" {
		return p
	}
	abs := r.abs(p)
	rel, err := filepath.Rel(r.view.Cwd, abs)
	outside := err != nil || rel == ".." || strings.HasPrefix(rel, "../")
	switch {
	case outside && !filepath.IsAbs(p):
		return abs
	case outside, rel == ".", !filepath.IsAbs(p):
		return p
	}
	return rel
}

// markdownTitle reports whether an editor renders the title of a card of
// kind as Markdown, so that the paths and patterns in it must be made
// Markdown-safe (tools.MarkdownInline: the one rule, applied here to the
// paths titles name and to tool names, and by tools to the other values
// they put in titles, such as search patterns). Zed (zed-industries/zed,
// crates/acp_thread/src/acp_thread.rs, ToolCall::from_acp and
// update_fields; crates/agent_ui/src/acp/thread_view.rs,
// render_tool_call_label, which draws the label with render_markdown)
// makes an execute title a plain-text label (Markdown::new_text: shown
// verbatim), passes an edit title through util::markdown::MarkdownEscaped
// before rendering it (so a code span there would show its backticks),
// and renders every other kind's first line as Markdown, where
// `Read __tests__/a_b_.js` loses its underscores to emphasis. So edit and
// execute titles stay as they are, every other kind is made safe.
func markdownTitle(kind acp.ToolKind) bool {
	return kind != acp.ToolKind(tools.KindEdit) && kind != acp.ToolKind(tools.KindExecute)
}

// nameTitle is the title of a card that only knows the tool's name (kind
// other): the name, Markdown-safe.
func nameTitle(name string) string {
	if name == "" {
		return ""
	}
	return tools.MarkdownInline(name)
}

// locations makes paths absolute and converts lines (1-based, 0 for
// none) to the wire base. A single location is stored in w. nil gives
// nil (no change); an empty, non-nil list an empty one (the editor's
// list is cleared).
func (r *paths) locations(w *card, locs []tools.FileLocation) []acp.ToolCallLocation {
	if locs == nil {
		return nil
	}
	if len(locs) == 0 {
		return []acp.ToolCallLocation{}
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
