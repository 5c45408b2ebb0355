package toolsearch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/charlievieth/fastwalk"
)

// minWorkers is the least number of walk workers whatever the CPU count:
// a search waits on the disk as much as on the CPU.
const minWorkers = 4

// walk is one walk of a folder tree honouring the ignore rules.
type walk struct {
	// root is the folder searched: absolute and clean, symlinks not
	// resolved (the paths reported are below it).
	root string
	// top is the folder the ignore rules are relative to: the nearest
	// folder at or above root that holds .git, else the session cwd when
	// root lies in it, else root.
	top string
	// bound is the folder the caller was allowed to read: root, or a
	// folder above it (glob walks below a pattern's literal folders).
	bound string
	// rootRel is root relative to top ("" when they are the same), with
	// "/" separators.
	rootRel string
	// within are the real paths (symlinks resolved) a symbolic link met
	// on the way may lead into: the real root and the real session cwd.
	// Links leading elsewhere are not followed, so a search never reads
	// outside what the permission check judged.
	within []string

	sets sync.Map // folder path (as walked) -> *ignoreSet

	// What was left out, for the notes.
	linksOutside atomic.Int64 // symbolic links leading outside `within`
	unreadable   atomic.Int64 // folders or files that could not be read
}

// newWalk prepares a walk of root (absolute, clean) for a session whose
// cwd is cwd (absolute; "" for none). bound is the folder the caller was
// allowed to read (root itself, or a folder above it); links may lead
// into it or into cwd.
func newWalk(root, bound, cwd string) *walk {
	w := &walk{root: root, bound: bound}
	w.top = root
	found := false
	for d := root; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			w.top, found = d, true
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if !found && cwd != "" && within(cwd, root) {
		w.top = cwd
	}
	if rel, err := filepath.Rel(w.top, root); err == nil && rel != "." {
		w.rootRel = filepath.ToSlash(rel)
	}
	for _, p := range []string{bound, cwd} {
		if p == "" {
			continue
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			w.within = append(w.within, r)
		}
	}
	return w
}

// within reports whether p is dir or below it (both absolute and clean).
func within(dir, p string) bool {
	if p == dir {
		return true
	}
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, dir) && len(p) > len(dir) && p[len(dir)] == '/'
}

// rootSet builds the rules that apply at root: .git/info/exclude of the
// top (lowest precedence), then the ignore files of every folder from the
// top down to root. hidden reports that a folder on the way below
// w.bound, or root itself when it is below, is ignored: nothing under it
// is to be seen.
func (w *walk) rootSet() (s *ignoreSet, hidden bool) {
	if fi, err := os.Stat(filepath.Join(w.top, ".git")); err == nil && fi.IsDir() {
		if data, err := os.ReadFile(filepath.Join(w.top, ".git", "info", "exclude")); err == nil {
			s = s.child("", data)
		}
	}
	dir, base := w.top, ""
	s = s.child(base, readIgnoreFiles(dir)...)
	if w.rootRel != "" {
		for _, elem := range strings.Split(w.rootRel, "/") {
			dir = filepath.Join(dir, elem)
			if base == "" {
				base = elem
			} else {
				base += "/" + elem
			}
			if dir != w.bound && within(w.bound, dir) && (elem == ".git" || s != nil && s.ignored(base, true)) {
				hidden = true
			}
			s = s.child(base, readIgnoreFiles(dir)...)
		}
	}
	if s == nil {
		s = &ignoreSet{}
	}
	return s, hidden
}

// readIgnoreFiles returns the contents of dir's ignore files that exist.
func readIgnoreFiles(dir string) [][]byte {
	var out [][]byte
	for _, n := range ignoreNames {
		if data, err := os.ReadFile(filepath.Join(dir, n)); err == nil {
			out = append(out, data)
		}
	}
	return out
}

// relTop returns rel (relative to root) relative to top.
func (w *walk) relTop(rel string) string {
	if w.rootRel == "" {
		return rel
	}
	return w.rootRel + "/" + rel
}

// run walks the tree and calls visit, from several goroutines at once,
// for every regular file that no ignore rule hides, with its path (as
// walked: below root) and its path relative to root ("/" separators).
// .git entries are never entered; symbolic links are followed when they
// lead inside w.within (loops are detected and cut); other non-regular
// files (sockets, devices, FIFOs) are skipped. A visit error stops the
// walk and is returned; so is ctx's error once it is done.
func (w *walk) run(ctx context.Context, visit func(path, rel string) error) error {
	top, hidden := w.rootSet()
	if hidden {
		return ctx.Err()
	}
	w.sets.Store(w.root, top)
	conf := fastwalk.Config{Follow: true, NumWorkers: max(minWorkers, runtime.GOMAXPROCS(0))}
	err := fastwalk.Walk(&conf, w.root, func(path string, de fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			w.unreadable.Add(1)
			if de != nil && de.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if path == w.root {
			return nil
		}
		name := de.Name()
		parent := path[:len(path)-len(name)-1]
		if parent == "" {
			parent = "/"
		}
		typ := de.Type()
		isDir := typ.IsDir()
		// skip leaves this entry out. fastwalk reads SkipDir from a
		// regular file's callback as an error of its folder, so only
		// folders and links get it.
		skip := func() error {
			if isDir || typ&fs.ModeSymlink != 0 {
				return filepath.SkipDir
			}
			return nil
		}
		v, _ := w.sets.Load(parent)
		set, _ := v.(*ignoreSet)
		if set == nil || name == ".git" {
			return skip()
		}
		rel := path[len(w.root)+1:]
		if typ&fs.ModeSymlink != 0 {
			st, err := fastwalk.StatDirEntry(path, de)
			if err != nil {
				// A dangling link, or one that names itself, leads to
				// nothing to read; other failures are noted.
				if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ELOOP) {
					w.unreadable.Add(1)
				}
				return nil
			}
			if !w.leadsWithin(path) {
				w.linksOutside.Add(1)
				return filepath.SkipDir
			}
			isDir = st.IsDir()
			if !isDir && !st.Mode().IsRegular() {
				return nil
			}
		} else if !isDir && !typ.IsRegular() {
			return nil
		}
		rt := w.relTop(filepath.ToSlash(rel))
		if set.ignored(rt, isDir) {
			return skip()
		}
		if isDir {
			w.sets.Store(path, set.child(rt, readIgnoreFiles(path)...))
			return nil
		}
		return visit(path, filepath.ToSlash(rel))
	})
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// leadsWithin reports whether path (a symbolic link, or the root)
// resolves to a place inside w.within.
func (w *walk) leadsWithin(path string) bool {
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	for _, d := range w.within {
		if within(d, r) {
			return true
		}
	}
	return false
}
