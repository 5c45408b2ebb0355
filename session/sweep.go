package session

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sidecarOf returns the log name a file name of a log's folder belongs
// to when the file is one of that log's companions: its lock (LockPath),
// title (TitlePath), archive mark (ArchivedPath), a crash repair's backup (BackupPath) or temporary
// file, or a title's temporary file. ok is false for anything else (a
// log itself, a foreign file).
func sidecarOf(n string) (base string, ok bool) {
	if rest, ok := strings.CutPrefix(n, "."); ok {
		// .B.tmp-X (a repair's) and .B.title.tmp-X (a title's): see
		// tempPrefix.
		if b, _, ok := strings.Cut(rest, ".tmp-"); ok {
			b = strings.TrimSuffix(b, ".title")
			return b, strings.HasSuffix(b, ".jsonl")
		}
		return "", false
	}
	// The companions' names are the log's name plus a suffix: the ones
	// LockPath, TitlePath and ArchivedPath add.
	for _, suffix := range []string{LockPath(""), TitlePath(""), ArchivedPath("")} {
		if b, ok := strings.CutSuffix(n, suffix); ok {
			return b, strings.HasSuffix(b, ".jsonl")
		}
	}
	if b, ok := strings.CutSuffix(n, ".bak"); ok {
		if i := strings.LastIndexByte(b, '.'); i > 0 && isBackupOf(n, b[:i]) {
			return b[:i], strings.HasSuffix(b[:i], ".jsonl")
		}
	}
	return "", false
}

// Sweep removes, under root (the state folder), the companions of logs
// that no longer exist (see sidecarOf): what a delete interrupted after
// it removed the log (a kill at that moment) leaves behind. A lock
// someone holds is left alone with its companions: a process that has
// just created a session holds the lock before its log's first line. A
// group is removed under its lock, the lock file last (ids are fresh
// for each new session, so no other process is about to lock it). It
// returns how many files it removed; errors are joined, the sweep goes
// on past them. A missing root is no error.
func Sweep(root string) (int, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "*"))
	if err != nil {
		return 0, err
	}
	removed := 0
	var errs []error
	for _, dir := range dirs {
		names, err := dirNames(dir)
		if err != nil {
			continue // a file, or unreadable: not a folder of logs
		}
		// A log missing from the listing may have been made since:
		// sweepGroup looks again, under the lock, before removing.
		listed := make(map[string]bool, len(names))
		for _, n := range names {
			listed[n] = true
		}
		orphans := map[string][]string{}
		for _, n := range names {
			if base, ok := sidecarOf(n); ok && !listed[base] {
				orphans[base] = append(orphans[base], n)
			}
		}
		for base, names := range orphans {
			n, err := sweepGroup(filepath.Join(dir, base), names)
			removed += n
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	removed += sweepIndexTemps(root)
	return removed, errors.Join(errs...)
}

// dirNames lists the names in dir, unsorted (a folder of 10,000 sessions
// holds some 20,000 names, and Sweep runs at every start).
func dirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// sweepGroup removes the companions names of the missing log at path,
// holding its lock; nothing when another process holds it or the log
// has come back meanwhile.
func sweepGroup(path string, names []string) (int, error) {
	lock, err := Acquire(path)
	var locked *LockedError
	if errors.As(err, &locked) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer lock.Release()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return removeCompanions(path, names)
}

// removeCompanions removes the companion files names (in the folder of
// the log at path), then the log's lock file, which the caller holds:
// the lock goes last, so no other process locks the log meanwhile. It
// returns how many files it removed; files already gone are no error.
func removeCompanions(path string, names []string) (int, error) {
	dir, lockName := filepath.Dir(path), filepath.Base(LockPath(path))
	removed := 0
	var errs []error
	for _, n := range append(slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == lockName }), lockName) {
		if err := os.Remove(filepath.Join(dir, n)); err == nil {
			removed++
		} else if !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}
