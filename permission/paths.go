package permission

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds the symlinks ResolvePath follows (the kernel's own
// limit, MAXSYMLINKS, is 40).
const maxLinks = 40

// ResolvePath makes p absolute against cwd and resolves it the way the
// kernel does, one component at a time: a symlink is followed where it
// stands (so "link/.." is the link target's parent, never the link's
// own directory), a dangling link to the path it names, and the missing
// tail of a path that does not exist yet is kept as written. The result
// is clean, absolute and free of symlinks (as of the call): it is the
// path the permission check judges and the one the tools open, so both
// see one resolution. A component that is not a directory is kept as it
// is (opening the result then fails with ENOTDIR, as the kernel would).
// After 40 links it fails with a *fs.PathError wrapping ELOOP (a loop:
// the kernel would refuse the path too).
func ResolvePath(cwd, p string) (string, error) {
	sep := string(filepath.Separator)
	if !filepath.IsAbs(p) {
		p = cwd + sep + p
	}
	pending := strings.Split(p, sep)
	resolved := sep
	for hops := 0; len(pending) > 0; {
		comp := pending[0]
		pending = pending[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		target, err := os.Readlink(next)
		if err != nil {
			// Not a link (or not there): take it as it is.
			resolved = next
			continue
		}
		if hops++; hops > maxLinks {
			return "", &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
		}
		if filepath.IsAbs(target) {
			resolved = sep
		}
		pending = append(strings.Split(target, sep), pending...)
	}
	return resolved, nil
}

// Resolve is ResolvePath for a judgement: a path it cannot resolve (a
// symlink loop) comes back as a marker that is not absolute, which
// Inside never counts as inside, so such a path is always asked about.
func Resolve(cwd, p string) string {
	r, err := ResolvePath(cwd, p)
	if err != nil {
		return unresolvable
	}
	return r
}

// unresolvable is what Resolve returns for a path it cannot resolve: not
// absolute, so inside no directory.
const unresolvable = "<unresolvable>"

// Inside reports whether the resolved path p is cwd or below it (by path
// segment: /proj2 is not inside /proj). cwd is resolved the same way.
func Inside(cwd, p string) bool {
	return within(Resolve(cwd, cwd), p)
}

// within reports whether p is root or below it; both resolved.
func within(root, p string) bool {
	if !filepath.IsAbs(p) || !filepath.IsAbs(root) {
		return false
	}
	if p == root {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// RunsCode reports whether the resolved path p, inside cwd, is a file
// that makes tools run code when they next read it, so that changing it
// is asked about in every mode but bypassPermissions (README, "Files
// that run code"):
//   - anything under a `.git` directory, or a `.git` file (a worktree's
//     pointer to its git directory), at any depth: git's config
//     (core.fsmonitor, core.pager, aliases, filters) and hooks run
//     commands on the next `git status` or `git commit`;
//   - `.envrc`: direnv runs it when a shell enters the directory.
//
// Names are compared case-insensitively, as a case-insensitive file
// system would open them.
func RunsCode(cwd, p string) bool {
	root := Resolve(cwd, cwd)
	if !within(root, p) || p == root {
		return false
	}
	rel := strings.TrimPrefix(p[len(root):], string(filepath.Separator))
	parts := strings.Split(rel, string(filepath.Separator))
	for _, part := range parts {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return strings.EqualFold(parts[len(parts)-1], ".envrc")
}

// DirInside reports whether the resolved path dir, inside cwd, is a
// directory that can be opened beneath cwd's root handle (os.Root, which
// on Linux uses openat2 with RESOLVE_BENEATH semantics): the check a
// tool makes before it runs something there, so that a component swapped
// for a symlink since the resolution fails instead of leading outside.
// The error is ENOTDIR for a file, the open's error otherwise.
func DirInside(cwd, dir string) error {
	root := Resolve(cwd, cwd)
	if !within(root, dir) {
		return &fs.PathError{Op: "open", Path: dir, Err: errors.New("path escapes from the session directory")}
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	fi, err := r.Stat(rel)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "chdir", Path: dir, Err: syscall.ENOTDIR}
	}
	return nil
}

// ResolveShown is ResolvePath with the path to show for the result:
// shown is p made absolute against cwd and cleaned as text when that
// text names the same file as the kernel's resolution (target), else
// target itself (cleaning ".." as text after a symlink names another
// file than the kernel opens). Tools take both from here instead of
// joining or cleaning an argument path themselves, so what they show,
// what the permission check judges and what they open agree. On error
// (ELOOP, as ResolvePath) shown is still set, for the message.
func ResolveShown(cwd, p string) (shown, target string, err error) {
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(cwd, p)
	}
	shown = filepath.Clean(abs)
	target, err = ResolvePath(cwd, p)
	if err != nil {
		return shown, "", err
	}
	if Resolve(cwd, shown) != target {
		shown = target
	}
	return shown, target, nil
}
