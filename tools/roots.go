package tools

import (
	"path/filepath"
	"slices"
	"strings"
)

type dirsKey struct{}

// SetAdditionalDirectories records the session's additional workspace
// roots (ACP `additionalDirectories`: absolute, clean, existing
// directories, in the editor's order) beside its Cwd. Call it before any
// tool runs; a later call is ignored. Files under them count as inside
// the project, as files under Cwd do: for the permission policy, the
// file tools (the editor backend) and the command sandbox, which may
// allow writes there.
func SetAdditionalDirectories(s Session, dirs []string) {
	if s == nil {
		return
	}
	d := slices.Clone(dirs)
	s.Value(dirsKey{}, func() any { return d })
}

// AdditionalDirectories returns the session's additional roots (nil when
// it has none, or s is nil). The caller must not change the slice.
func AdditionalDirectories(s Session) []string {
	if s == nil {
		return nil
	}
	d, _ := s.Value(dirsKey{}, nil).([]string)
	return d
}

// Roots returns the session's workspace roots: Cwd first, then the
// additional directories.
func Roots(s Session) []string {
	if s == nil {
		return nil
	}
	return append([]string{s.Cwd()}, AdditionalDirectories(s)...)
}

// InRoots reports whether the absolute, clean path p is one of roots or
// lies below one of them (by path segment: /proj2 is not inside /proj).
// It compares text only; resolving symlinks is the caller's job.
func InRoots(roots []string, p string) bool {
	for _, r := range roots {
		if r == "" {
			continue
		}
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
