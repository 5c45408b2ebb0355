package toolsearch

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/tools"
)

// GlobArgs are the arguments of `glob`.
type GlobArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

const globDescription = "Find files by path pattern, newest first. The pattern is matched against paths relative to path: " +
	"`*` and `?` stay within one folder, `**` spans folders, `[abc]` and `{a,b}` work (\"**/*.go\", \"src/**/*_test.go\", \"*.{yml,yaml}\" for the top folder only). " +
	"Honours .gitignore, .ignore and .git/info/exclude and skips .git/. Paths in the output are relative to the working directory."

// Glob returns the `glob` tool: the regular files under path (default
// the session cwd) whose path relative to path matches the pattern
// (doublestar syntax), newest modification first (ties by path), as
// "Found N files" and one path a line (relative to the session cwd,
// absolute outside it); at most DefaultHeadLimit, with a note when cut.
// Errors: INVALID_ARGS (an empty or invalid pattern), SEARCH_NOT_FOUND,
// SEARCH_IO_ERROR, SEARCH_ABORTED.
func Glob() tools.Tool {
	return tools.Define(tools.Def[GlobArgs]{
		Name:            "glob",
		Description:     globDescription,
		Class:           tools.ClassReadOnly,
		ConcurrencySafe: true,
		Spec: tools.Spec{
			{Name: "pattern", Prop: tools.Prop{Type: tools.TypeString, Required: true,
				Description: "The glob pattern, e.g. \"**/*.ts\"."}},
			{Name: "path", Prop: tools.Prop{Type: tools.TypeString,
				Description: "The folder to search in. Defaults to the working directory."}},
		},
		Execute:       executeGlob,
		Access:        func(a GlobArgs) tools.Access { return tools.Access{Paths: []string{a.Path}} },
		PresentCall:   presentGlobCall,
		PresentResult: func(_ GlobArgs, r tools.ResultInput) tools.ToolResultView { return presentResult(r) },
	})
}

// globTitle is "glob PATTERN [in PATH]", each Markdown-safe.
func globTitle(a GlobArgs) string {
	t := "glob " + tools.MarkdownInline(a.Pattern)
	if a.Path != "" {
		t += " in " + tools.MarkdownInline(a.Path)
	}
	return t
}

func presentGlobCall(a GlobArgs) tools.ToolCallView {
	return tools.GenericCall{Title: globTitle(a), Kind: tools.KindSearch}
}

type globHit struct {
	path string // absolute, as walked
	mod  time.Time
}

func executeGlob(ctx context.Context, ex *tools.Exec, a GlobArgs) (tools.Output, error) {
	pattern, err := globPattern(a.Pattern)
	if err != nil {
		return tools.Output{}, err
	}
	cwd := cwdOf(ex.Session)
	root, shown, fi, err := resolveRoot(cwd, a.Path)
	if err != nil {
		return tools.Output{}, err
	}
	if !fi.IsDir() {
		return tools.Output{}, argErr("path " + strconv.Quote(shown) + " is not a folder")
	}
	// Walk only below the pattern's literal folder ("src/**/*.go" walks
	// src); the rest of the pattern matches below it.
	base, rest := doublestar.SplitPattern(pattern)
	start, w, none := globStart(root, cwd, base)
	if none != "" {
		return tools.Output{Content: []tools.Content{tools.Text(none)}}, nil
	}
	hits, err := globHits(ctx, w, rest)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Output{}, searchErr("SEARCH_ABORTED", "glob aborted", ctx.Err())
		}
		return tools.Output{}, searchErr("SEARCH_IO_ERROR", "cannot search "+strconv.Quote(start)+": "+err.Error(), err)
	}
	return globOutput(cwd, hits, w), nil
}

// globPattern checks a glob's pattern and returns it with slashes and
// without a leading "./"; it must be valid and stay below the search's
// path, which the permission check judged.
func globPattern(p string) (string, error) {
	if p == "" {
		return "", argErr("pattern must be a non-empty string")
	}
	pattern := strings.TrimPrefix(filepath.ToSlash(p), "./")
	if !doublestar.ValidatePattern(pattern) {
		return "", argErr("pattern " + strconv.Quote(p) + " is not a valid glob")
	}
	if strings.HasPrefix(pattern, "/") || pattern == ".." || strings.HasPrefix(pattern, "../") || strings.Contains(pattern, "/../") || strings.HasSuffix(pattern, "/..") {
		return "", argErr("pattern must be relative to path and stay below it; put the folder to search in path")
	}
	return pattern, nil
}

// globStart resolves the pattern's literal folder base below root the
// kernel's way (it holds no "..", but may hold a symlink) and returns
// it with the walk that starts there; none is the whole answer instead
// when there is nothing to walk: no such folder, or one that leads
// outside root and cwd (noted).
func globStart(root, cwd, base string) (start string, w *walk, none string) {
	start = root
	if base != "." {
		var err error
		if start, err = permission.ResolvePath(root, filepath.FromSlash(base)); err != nil {
			return "", nil, "No files found"
		}
	}
	w = newWalk(start, root, cwd)
	if start != root {
		st, err := os.Stat(start)
		if err != nil || !st.IsDir() {
			return "", nil, "No files found"
		}
		if !within(root, start) && !within(cwd, start) {
			w.linksOutside.Add(1)
			var nt notes
			walkNotes(&nt, w)
			return "", nil, "No files found" + nt.String()
		}
	}
	return start, w, ""
}

// globHits walks w and returns the files whose path below the start
// matches rest, newest first (then by path).
func globHits(ctx context.Context, w *walk, rest string) ([]globHit, error) {
	var (
		mu   sync.Mutex
		hits []globHit
	)
	err := w.run(ctx, func(path, rel string) error {
		if !doublestar.MatchUnvalidated(rest, rel) {
			return nil
		}
		st, err := os.Stat(path)
		if err != nil {
			w.unreadable.Add(1)
			return nil
		}
		mu.Lock()
		hits = append(hits, globHit{path, st.ModTime()})
		mu.Unlock()
		return nil
	})
	sort.Slice(hits, func(i, j int) bool {
		if !hits[i].mod.Equal(hits[j].mod) {
			return hits[i].mod.After(hits[j].mod)
		}
		return pathLess(hits[i].path, hits[j].path)
	})
	return hits, err
}

// globOutput is the model's text and the card's locations for hits:
// at most DefaultHeadLimit paths and MaxOutputBytes, then the notes.
func globOutput(cwd string, hits []globHit, w *walk) tools.Output {
	var (
		b    strings.Builder
		meta resultMeta
		nt   notes
	)
	if len(hits) == 0 {
		b.WriteString("No files found")
	} else {
		b.WriteString("Found " + plural(len(hits), "file", "files"))
		shown := 0
		for _, h := range hits {
			if shown == DefaultHeadLimit {
				break
			}
			line := displayPath(cwd, h.path)
			if b.Len()+len(line)+1 > MaxOutputBytes {
				nt.add("The output was cut at " + strconv.Itoa(MaxOutputBytes>>10) + " KiB.")
				break
			}
			b.WriteString("\n" + line)
			if len(meta.Locations) < MaxLocations {
				if l := location(h.path, 0); l != nil {
					meta.Locations = append(meta.Locations, *l)
				}
			}
			shown++
		}
		if shown < len(hits) {
			nt.add("Showing the " + strconv.Itoa(shown) + " most recently modified of " + plural(len(hits), "file", "files") +
				". Narrow the pattern or the path.")
		}
	}
	walkNotes(&nt, w)
	return tools.Output{Content: []tools.Content{tools.Text(b.String() + nt.String())}, Meta: meta.marshal()}
}
