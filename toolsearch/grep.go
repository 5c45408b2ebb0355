package toolsearch

import (
	"container/heap"
	"context"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dsh-acp/dsh-acp/tools"
)

// GrepArgs are the arguments of `grep`; the pointers are nil when absent.
type GrepArgs struct {
	Pattern    string   `json:"pattern"`
	Path       string   `json:"path"`
	Glob       string   `json:"glob"`
	IgnoreCase bool     `json:"ignore_case"`
	OutputMode string   `json:"output_mode"`
	Context    *float64 `json:"context"`
	HeadLimit  *float64 `json:"head_limit"`
}

const grepDescription = `Search file contents with a regular expression (Go RE2 syntax: no look-around, no backreferences; ` +
	"`\\b`, `\\d`, `(?i)`, `[[:alpha:]]` work). Each line is matched on its own; `^` and `$` anchor at line starts and ends. " +
	"Searches the tree under path, honouring .gitignore, .ignore and .git/info/exclude (also outside a git repository), " +
	"skipping .git/ and binary files. Paths in the output are relative to the working directory. " +
	"Prefer this tool to running grep or rg in bash."

// Grep returns the `grep` tool. Its output (paths relative to the
// session cwd, absolute outside it, sorted by path):
//
//   - files_with_matches: "Found N files" and one path a line;
//   - content: "path:line:text" for a matching line, "path-line-text"
//     for a context line, "--" between groups that do not touch (the
//     format of grep -n and rg, which models read well);
//   - count: "Found N matching lines in M files" and "path:count" a line.
//
// At most head_limit entries (files, or lines in content mode) are shown
// (DefaultHeadLimit when absent), with a note saying what was cut. Long
// lines are cut to MaxLineBytes around their first match. Bytes that are
// not UTF-8 are shown as \xNN. Errors: INVALID_ARGS (an empty pattern,
// a bad output_mode, context or head_limit, a glob that is no pattern),
// SEARCH_BAD_PATTERN (not RE2), SEARCH_NOT_FOUND (no such path),
// SEARCH_IO_ERROR, SEARCH_ABORTED (cancelled).
func Grep() tools.Tool {
	return tools.Define(tools.Def[GrepArgs]{
		Name:        "grep",
		Description: grepDescription,
		// A search changes nothing: it runs unasked, beside other reads.
		Class:           tools.ClassReadOnly,
		ConcurrencySafe: true,
		Spec: tools.Spec{
			{Name: "pattern", Prop: tools.Prop{Type: tools.TypeString, Required: true,
				Description: "The regular expression to search for (RE2 syntax)."}},
			{Name: "path", Prop: tools.Prop{Type: tools.TypeString,
				Description: "File or folder to search. Defaults to the working directory."}},
			{Name: "glob", Prop: tools.Prop{Type: tools.TypeString,
				Description: "Only search files matching this glob: without \"/\" it matches the file name (\"*.go\", \"*.{ts,tsx}\"), with \"/\" the path relative to path (\"src/**/*.go\")."}},
			{Name: "ignore_case", Prop: tools.Prop{Type: tools.TypeBoolean, Description: "Match case-insensitively. Defaults to false."}},
			{Name: "output_mode", Prop: tools.Prop{Type: tools.TypeString, Enum: []string{modeFiles, modeContent, modeCount},
				Description: "files_with_matches (default): the paths of matching files; content: the matching lines as path:line:text; count: matching lines per file."}},
			{Name: "context", Prop: tools.Prop{Type: tools.TypeNumber,
				Description: "Lines of context shown before and after each match (content mode only). Defaults to 0."}},
			{Name: "head_limit", Prop: tools.Prop{Type: tools.TypeNumber,
				Description: "Show at most this many entries (files, or lines in content mode). Defaults to " + strconv.Itoa(DefaultHeadLimit) + "."}},
		},
		Execute:       executeGrep,
		Access:        func(a GrepArgs) tools.Access { return tools.Access{Paths: []string{a.Path}} },
		PresentCall:   presentGrepCall,
		PresentResult: func(_ GrepArgs, r tools.ResultInput) tools.ToolResultView { return presentResult(r) },
	})
}

// grepTitle is the card title: "grep [-i] PATTERN [in PATH] [(GLOB)]",
// each argument Markdown-safe.
func grepTitle(a GrepArgs) string {
	t := "grep "
	if a.IgnoreCase {
		t += "-i "
	}
	t += tools.MarkdownInline(a.Pattern)
	if a.Path != "" {
		t += " in " + tools.MarkdownInline(a.Path)
	}
	if a.Glob != "" {
		t += " (" + tools.MarkdownInline(a.Glob) + ")"
	}
	return t
}

func presentGrepCall(a GrepArgs) tools.ToolCallView {
	return tools.GenericCall{Title: grepTitle(a), Kind: tools.KindSearch}
}

// intArg checks an optional integer argument in [lo, hi].
func intArg(name string, v *float64, lo, hi, def int) (int, error) {
	if v == nil {
		return def, nil
	}
	x := *v
	if x != math.Trunc(x) || x < float64(lo) || x > float64(hi) {
		return 0, argErr(name + " must be an integer from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi))
	}
	return int(x), nil
}

// grepQuery is a checked grep call.
type grepQuery struct {
	eng   *engine
	limit int
	glob  string
	// globPath: the glob has a "/" and matches the path relative to the
	// root, else the name.
	globPath bool
}

func compileGrep(a GrepArgs) (*grepQuery, error) {
	if a.Pattern == "" {
		return nil, argErr("pattern must be a non-empty string")
	}
	mode := a.OutputMode
	if mode == "" {
		mode = modeFiles
	}
	ctxLines, err := intArg("context", a.Context, 0, MaxContext, 0)
	if err != nil {
		return nil, err
	}
	if mode != modeContent {
		ctxLines = 0
	}
	limit, err := intArg("head_limit", a.HeadLimit, 1, MaxHeadLimit, DefaultHeadLimit)
	if err != nil {
		return nil, err
	}
	if a.Glob != "" && !doublestar.ValidatePattern(a.Glob) {
		return nil, argErr("glob " + strconv.Quote(a.Glob) + " is not a valid pattern")
	}
	// The pattern alone first, so an error quotes it as given.
	if _, err := regexp.Compile(a.Pattern); err != nil {
		msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		return nil, searchErr("SEARCH_BAD_PATTERN", "invalid regular expression (RE2 syntax): "+msg, err)
	}
	// (?m): ^ and $ anchor at line starts and ends, since a file is
	// searched many lines at a time.
	flags := "(?m)"
	if a.IgnoreCase {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + a.Pattern)
	if err != nil {
		return nil, searchErr("SEARCH_BAD_PATTERN", "invalid regular expression (RE2 syntax): "+err.Error(), err)
	}
	eng := &engine{re: re, mode: mode, context: ctxLines, keep: limit + 1}
	if _, complete := re.LiteralPrefix(); !complete {
		eng.pf = newPrefilter(flags + a.Pattern)
	}
	q := &grepQuery{eng: eng, limit: limit, glob: a.Glob,
		globPath: strings.Contains(a.Glob, "/")}
	return q, nil
}

// wants reports whether a walked file passes the glob filter.
func (q *grepQuery) wants(rel string) bool {
	if q.glob == "" {
		return true
	}
	if q.globPath {
		return doublestar.MatchUnvalidated(q.glob, rel)
	}
	return doublestar.MatchUnvalidated(q.glob, rel[strings.LastIndexByte(rel, '/')+1:])
}

func executeGrep(ctx context.Context, ex *tools.Exec, a GrepArgs) (tools.Output, error) {
	q, err := compileGrep(a)
	if err != nil {
		return tools.Output{}, err
	}
	cwd := cwdOf(ex.Session)
	root, shown, fi, err := resolveRoot(cwd, a.Path)
	if err != nil {
		return tools.Output{}, err
	}
	col := newCollector(q.eng, q.limit)
	var w *walk
	if !fi.IsDir() {
		// A file named by path is searched whatever the ignore rules
		// and the glob say.
		if err := searchFile(q.eng, root, col); err != nil {
			return tools.Output{}, searchErr("SEARCH_IO_ERROR", "cannot read "+strconv.Quote(shown)+": "+err.Error(), err)
		}
	} else {
		w = newWalk(root, root, cwd)
		err = w.run(ctx, func(path, rel string) error {
			if !q.wants(rel) {
				return nil
			}
			if err := searchFile(q.eng, path, col); err != nil {
				w.unreadable.Add(1)
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return tools.Output{}, searchErr("SEARCH_ABORTED", "grep aborted", ctx.Err())
			}
			return tools.Output{}, searchErr("SEARCH_IO_ERROR", "cannot search "+strconv.Quote(shown)+": "+err.Error(), err)
		}
	}
	text, meta := col.render(cwd, q.eng.mode, w)
	return tools.Output{Content: []tools.Content{tools.Text(text)}, Meta: meta.marshal()}, nil
}

// searchFile searches one file and hands a match to col.
func searchFile(e *engine, path string, col *collector) error {
	f, err := openRead(path)
	if err != nil {
		return err
	}
	defer f.Close()
	res, err := e.search(f)
	if err != nil {
		return err
	}
	if res.binary || res.count == 0 {
		return nil
	}
	col.add(path, res)
	return nil
}

// found is one file in the collector.
type found struct {
	path string // as walked (absolute)
	res  fileResult
}

// collector gathers the files found by concurrent searches and keeps,
// with bounded memory, the first ones in path order: the smallest paths
// whose entries (1 per file, or output lines in content mode) reach the
// limit plus one (the one more tells that the output was cut).
type collector struct {
	mu      sync.Mutex
	content bool
	context int // context lines of content mode
	limit   int
	kept    foundHeap // a max-heap by path
	entries int       // entries held in kept
	files   int       // every file with a match, kept or not
	lines   int       // matching lines of every file (a lower bound when a file's search stopped early)
	dropped bool      // entries were dropped, or a file's search stopped early
}

func newCollector(e *engine, limit int) *collector {
	return &collector{content: e.mode == modeContent, context: e.context, limit: limit}
}

func entriesOf(content bool, r fileResult) int {
	if !content {
		return 1
	}
	n := 0
	for _, l := range r.lines {
		if l.n > 0 {
			n++
		}
	}
	return n
}

func (c *collector) add(path string, r fileResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.files++
	c.lines += r.count
	if r.more {
		c.dropped = true
	}
	heap.Push(&c.kept, found{path, r})
	c.entries += entriesOf(c.content, r)
	for len(c.kept) > 1 {
		top := c.kept[0]
		n := entriesOf(c.content, top.res)
		if c.entries-n < c.limit+1 {
			break
		}
		heap.Pop(&c.kept)
		c.entries -= n
		c.dropped = true
	}
}

type foundHeap []found

func (h foundHeap) Len() int           { return len(h) }
func (h foundHeap) Less(i, j int) bool { return pathLess(h[j].path, h[i].path) }
func (h foundHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *foundHeap) Push(x any)        { *h = append(*h, x.(found)) }
func (h *foundHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sorted returns the kept files in path order.
func (c *collector) sorted() []found {
	out := make([]found, len(c.kept))
	h := append(foundHeap(nil), c.kept...)
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(found)
	}
	return out
}

// render writes the output text and the card's locations. w, when
// non-nil, gives the notes of the walk.
func (c *collector) render(cwd, mode string, w *walk) (string, resultMeta) {
	c.mu.Lock()
	defer c.mu.Unlock()
	files := c.sorted()
	o := &grepOut{}
	switch {
	case c.files == 0:
		if mode == modeFiles {
			o.b.WriteString("No files found\n")
		} else {
			o.b.WriteString("No matches found\n")
		}
	case mode == modeContent:
		c.renderLines(o, cwd, files)
	default:
		c.renderFiles(o, cwd, mode, files)
	}
	if o.cut {
		o.nt.add("The output was cut at " + strconv.Itoa(MaxOutputBytes>>10) + " KiB; narrow the search or lower head_limit.")
	}
	walkNotes(&o.nt, w)
	return strings.TrimRight(o.b.String(), "\n") + o.nt.String(), o.meta
}

// grepOut is a grep answer being written: the text (at most
// MaxOutputBytes; cut once a line did not fit), the card's locations
// and the notes.
type grepOut struct {
	b    strings.Builder
	meta resultMeta
	nt   notes
	cut  bool
}

// write adds line s, or reports false (and marks the text cut) when it
// would pass MaxOutputBytes.
func (o *grepOut) write(s string) bool {
	if o.b.Len()+len(s)+1 > MaxOutputBytes {
		o.cut = true
		return false
	}
	o.b.WriteString(s)
	o.b.WriteByte('\n')
	return true
}

// locate adds f's first match to the card's locations, up to
// MaxLocations.
func (o *grepOut) locate(f found) {
	if len(o.meta.Locations) < MaxLocations {
		if l := location(f.path, f.res.first); l != nil {
			o.meta.Locations = append(o.meta.Locations, *l)
		}
	}
}

// renderLines writes the content mode's answer: matching lines (and
// their context) file by file, up to c.limit lines.
func (c *collector) renderLines(o *grepOut, cwd string, files []found) {
	shown := 0
out:
	for fi, f := range files {
		if shown >= c.limit {
			break
		}
		p := displayPath(cwd, f.path)
		// With context, "--" also separates files, as grep and rg
		// print it.
		if fi > 0 && c.context > 0 && !o.write("--") {
			break
		}
		o.locate(f)
		for _, l := range f.res.lines {
			if shown >= c.limit {
				break out
			}
			var line string
			switch {
			case l.n == 0:
				line = "--"
			case l.match:
				line = p + ":" + strconv.Itoa(l.n) + ":" + showLine(l.text, l.start)
			default:
				line = p + "-" + strconv.Itoa(l.n) + "-" + showLine(l.text, 0)
			}
			if !o.write(line) {
				break out
			}
			if l.n > 0 {
				shown++
			}
		}
	}
	if !o.cut && (c.dropped || c.entries > shown) {
		o.nt.add("Showing the first " + plural(shown, "line", "lines") + "; more lines matched, in " + plural(c.files, "file", "files") +
			" in all. Narrow the search with path, glob or a more specific pattern, or raise head_limit.")
	}
}

// renderFiles writes the files and count modes' answer: a head line,
// then one line per file (with its count), up to c.limit files.
func (c *collector) renderFiles(o *grepOut, cwd, mode string, files []found) {
	head := "Found " + plural(c.files, "file", "files")
	if mode == modeCount {
		head = "Found " + plural(c.lines, "matching line", "matching lines") + " in " + plural(c.files, "file", "files")
	}
	o.write(head)
	shown := 0
	for _, f := range files {
		if shown >= c.limit {
			break
		}
		line := displayPath(cwd, f.path)
		if mode == modeCount {
			line += ":" + strconv.Itoa(f.res.count)
		}
		if !o.write(line) {
			break
		}
		o.locate(f)
		shown++
	}
	if shown < c.files && !o.cut {
		o.nt.add("Showing the first " + strconv.Itoa(shown) + " of " + plural(c.files, "file", "files") +
			". Narrow the search with path, glob or a more specific pattern, or raise head_limit.")
	}
}

// walkNotes adds what the walk left out.
func walkNotes(nt *notes, w *walk) {
	if w == nil {
		return
	}
	if n := int(w.linksOutside.Load()); n > 0 {
		nt.add("Did not follow " + plural(n, "symbolic link", "symbolic links") + " leading outside the searched folder and the working directory.")
	}
	if n := int(w.unreadable.Load()); n > 0 {
		nt.add(plural(n, "file or folder", "files or folders") + " could not be read.")
	}
}

// showLine returns a line for the output: whole when short, else a
// window of MaxLineBytes around offset start (cut at character
// boundaries, "…" marking each cut), escaped like escapeText.
func showLine(text []byte, start int) string {
	if len(text) <= MaxLineBytes {
		return escapeText(text)
	}
	from := max(0, min(start-MaxLineBytes/5, len(text)-MaxLineBytes))
	to := from + MaxLineBytes
	for from > 0 && !utf8.RuneStart(text[from]) {
		from--
	}
	for to < len(text) && !utf8.RuneStart(text[to]) {
		to--
	}
	s := escapeText(text[from:to])
	if from > 0 {
		s = "…" + s
	}
	if to < len(text) {
		s += "…"
	}
	return s
}
