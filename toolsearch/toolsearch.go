// Package toolsearch holds the search tools: `grep` (a regular
// expression over file contents) and `glob` (file paths by pattern).
// Both walk the tree in parallel (charlievieth/fastwalk), honour
// .gitignore, .ignore and .git/info/exclude at every level, inside a git
// repository or not (the rules are read with bmatcuk/doublestar patterns),
// never enter .git, follow symbolic links only where they stay inside the
// searched folder or the session cwd, and report paths relative to the
// session cwd (absolute outside it). Both are read-only and
// concurrency-safe: they run unasked in every mode unless the path lies
// outside the session cwd (Tool.Access), and several may run at once.
//
// They search the files on disk: an editor's unsaved buffers are not
// seen (ACP offers no way to list them).
package toolsearch

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Limits of the output.
const (
	// DefaultHeadLimit is the number of entries (files, or lines in
	// content mode) shown when head_limit is not given; glob always uses
	// it.
	DefaultHeadLimit = 200
	// MaxHeadLimit is the largest head_limit accepted.
	MaxHeadLimit = 5000
	// MaxContext is the largest context accepted, in lines.
	MaxContext = 50
	// MaxLineBytes is the longest line shown whole; a longer one is cut
	// to a window of this many bytes around its first match, marked "…".
	MaxLineBytes = 500
	// MaxOutputBytes bounds the text returned; past it the output is cut
	// with a note.
	MaxOutputBytes = 64 << 10
	// MaxLocations is the number of files a result card links to.
	MaxLocations = 20
)

// Tools returns grep and glob.
func Tools() []tools.Tool { return []tools.Tool{Grep(), Glob()} }

// searchErr is a failure with a code: name SearchError, codes
// SEARCH_BAD_PATTERN, SEARCH_NOT_FOUND, SEARCH_IO_ERROR, SEARCH_ABORTED;
// argument rules give INVALID_ARGS.
func searchErr(code, msg string, err error) *tools.Error {
	return &tools.Error{Name: "SearchError", Code: code, Message: msg, Err: err}
}

// argErr is a violated argument rule.
func argErr(msg string) *tools.Error {
	return &tools.Error{Name: tools.NameToolArgs, Code: tools.CodeInvalidArgs, Message: msg}
}

// cwdOf returns the real path of the session's cwd (symlinks resolved
// as permission.ResolvePath does), or of the process's working
// directory without a session. Walks, ignore rules and the paths shown
// are all in real paths, the ones the permission check judged.
func cwdOf(s tools.Session) string {
	cwd := ""
	if s != nil {
		cwd = s.Cwd()
	}
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if r, err := permission.ResolvePath(cwd, cwd); err == nil {
		return r
	}
	return cwd
}

// resolveRoot resolves the path argument ("" is cwd) with the
// permission check's own resolution (permission.ResolveShown: symlinks
// followed where they stand, then ".."), so the folder searched is the
// one that was judged, and stats it. It returns the real path and the
// path to name in messages. Errors: SEARCH_NOT_FOUND, SEARCH_IO_ERROR.
func resolveRoot(cwd, p string) (root, shown string, fi os.FileInfo, err error) {
	if p == "" {
		p = "."
	}
	shown, root, err = permission.ResolveShown(cwd, p)
	if err != nil {
		return "", "", nil, searchErr("SEARCH_IO_ERROR", "cannot search "+strconv.Quote(shown)+": "+err.Error(), err)
	}
	fi, err = os.Stat(root)
	switch {
	case os.IsNotExist(err):
		return "", "", nil, searchErr("SEARCH_NOT_FOUND", "path "+strconv.Quote(shown)+" does not exist", err)
	case err != nil:
		return "", "", nil, searchErr("SEARCH_IO_ERROR", "cannot search "+strconv.Quote(shown)+": "+err.Error(), err)
	}
	return root, shown, fi, nil
}

// displayPath is how a result path is shown: relative to cwd when inside
// it, else absolute; bytes that are not UTF-8 and control characters as
// \xNN.
func displayPath(cwd, abs string) string {
	p := abs
	if within(cwd, abs) && abs != cwd {
		p = abs[len(cwd):]
		p = strings.TrimPrefix(p, "/")
	}
	return escapeText([]byte(p))
}

// escapeText returns b as UTF-8 text: invalid bytes and control
// characters other than tab as \xNN, so the text shows what is there and
// stays on one line.
func escapeText(b []byte) string {
	clean := true
	for _, c := range b {
		if c < 0x20 && c != '\t' || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return string(b)
	}
	var sb strings.Builder
	const hex = "0123456789abcdef"
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 || r < 0x20 && r != '\t' || r == 0x7f {
			sb.WriteString(`\x`)
			sb.WriteByte(hex[b[0]>>4])
			sb.WriteByte(hex[b[0]&15])
			b = b[1:]
			continue
		}
		sb.Write(b[:size])
		b = b[size:]
	}
	return sb.String()
}

// pathLess orders paths element by element ("a/b" before "a-b", since
// "/" sorts before every other byte).
func pathLess(a, b string) bool {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x == '/' {
			return true
		}
		if y == '/' {
			return false
		}
		return x < y
	}
	return len(a) < len(b)
}

// resultMeta is the Meta of a search result: what the result card links
// to.
type resultMeta struct {
	// Locations are the first MaxLocations files returned, in order:
	// absolute paths, 1-based lines (0 when there is none to show).
	Locations []tools.FileLocation `json:"locations,omitempty"`
}

func (m resultMeta) marshal() json.RawMessage {
	if len(m.Locations) == 0 {
		return nil
	}
	b, _ := json.Marshal(m)
	return b
}

// presentResult is the result card of both tools: the text in a code
// block (paths and lines are not Markdown) and the files it names as
// locations. Errors keep the generic fallback. A logged location without
// a usable path (a damaged or foreign Meta) or with a negative line is
// left out: the editor could not follow it.
func presentResult(r tools.ResultInput) tools.ToolResultView {
	if r.IsError {
		return nil
	}
	var m resultMeta
	if len(r.Meta) > 0 {
		_ = json.Unmarshal(r.Meta, &m)
	}
	locs := slices.DeleteFunc(m.Locations, func(l tools.FileLocation) bool {
		return l.Path == "" || !utf8.ValidString(l.Path) || l.Line < 0
	})
	text := tools.JoinText(r.Content)
	return tools.GenericResult{Content: []tools.Content{tools.Text(tools.CodeFence("", text))}, Locations: locs}
}

// location is where a result card links for one file: nil when the path
// is not valid UTF-8 (the editor could not open it by a JSON string).
func location(abs string, line int) *tools.FileLocation {
	if !utf8.ValidString(abs) {
		return nil
	}
	return &tools.FileLocation{Path: abs, Line: line}
}

// notes collects the parenthesized remarks at the end of an output.
type notes []string

func (n *notes) add(s string) { *n = append(*n, s) }

func (n notes) String() string {
	if len(n) == 0 {
		return ""
	}
	return "\n\n(" + strings.Join(n, " ") + ")"
}

// plural returns "1 file" / "3 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
