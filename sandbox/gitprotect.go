package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// GitProtected returns what of the git repositories holding dirs (the
// project's folders) a command may read but not change (Policy.Protected):
// each repository's hooks folder and config file, its linked worktree's
// config.worktree and, for the submodules in its modules folder, theirs.
// The user's own git, run outside the sandbox after the turn, runs what
// these name (a hook, core.fsmonitor, a filter driver, core.pager): a
// command that could write them could run code outside the sandbox. The
// paths are real (symlinks resolved) and exist; none for a folder in no
// repository. A repository found through a ".git" file (a linked
// worktree or submodule) gives its git folder and its common one. With
// more than maxProtectedModules submodules the modules folder is
// protected whole. A missing hooks folder is made (empty, as git init makes it), so that
// no command can make it and fill it.
func GitProtected(dirs ...string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if r, err := filepath.EvalSymlinks(p); err == nil && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, dot := range gitEntries(dirs) {
		if fi, err := os.Lstat(dot); err == nil && fi.Mode().IsRegular() {
			add(dot) // a linked worktree's ".git" file, naming its git folder
		}
	}
	for _, gitDir := range gitDirs(dirs) {
		if err := os.Mkdir(filepath.Join(gitDir, "hooks"), 0o755); err != nil && !os.IsExist(err) {
			continue // not a git folder this user can use
		}
		for _, name := range []string{"hooks", "config", "config.worktree"} {
			add(filepath.Join(gitDir, name))
		}
		subs, _ := filepath.Glob(filepath.Join(gitDir, "modules", "*"))
		if len(subs) > maxProtectedModules {
			// Two mounts a submodule would make every command's start
			// cost grow with them (a command can make thousands): the
			// whole modules folder is read-only instead.
			add(filepath.Join(gitDir, "modules"))
			continue
		}
		for _, sub := range subs {
			add(filepath.Join(sub, "hooks"))
			add(filepath.Join(sub, "config"))
		}
	}
	return out
}

// maxProtectedModules is how many submodules of a repository
// GitProtected protects one by one (their hooks and config); with more,
// their whole modules folder is read-only.
const maxProtectedModules = 64

// GitPinned returns the ".git" folders of the repositories holding dirs
// that a command may change inside but not rename, remove or replace
// (Policy.Pinned): a command that moved .git away and made its own, or
// put a symlink or a ".git" file naming a folder of its own in its
// place, would have the user's git run that folder's hooks and config.
// The paths are real and exist; a ".git" that is a symlink is not
// pinned (a mount would follow it).
func GitPinned(dirs ...string) []string {
	var out []string
	for _, dot := range gitEntries(dirs) {
		if fi, err := os.Lstat(dot); err == nil && fi.IsDir() && !slices.Contains(out, dot) {
			out = append(out, dot)
		}
	}
	return out
}

// gitEntries returns the ".git" entries DotGits finds for each of dirs,
// with the folders holding them resolved (real paths, each once).
func gitEntries(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		for _, dot := range DotGits(d) {
			if real, err := filepath.EvalSymlinks(filepath.Dir(dot)); err == nil && !slices.Contains(out, filepath.Join(real, ".git")) {
				out = append(out, filepath.Join(real, ".git"))
			}
		}
	}
	return out
}

// gitDirs returns the git folders of the repositories holding dirs (see
// DotGits): a ".git" folder itself, or the folders a ".git" file names.
func gitDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		for _, dot := range DotGits(d) {
			if fi, err := os.Stat(dot); err == nil && fi.IsDir() {
				out = append(out, dot)
			} else if err == nil {
				out = append(out, linkedGitDirs(filepath.Dir(dot), dot)...)
			}
		}
	}
	return out
}

// DotGits returns the ".git" entries (a folder, or the file of a linked
// worktree or submodule) that git finds for dir: the one in dir or the
// nearest folder above it, along dir as given and along its real path
// (git walks up from the real one; the two differ through a symlink),
// each once. None means dir is in no git work tree.
func DotGits(dir string) []string {
	if dir == "" {
		return nil
	}
	paths := []string{filepath.Clean(dir)}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != paths[0] {
		paths = append(paths, real)
	}
	var out []string
	for _, p := range paths {
		for d := p; ; d = filepath.Dir(d) {
			dot := filepath.Join(d, ".git")
			if _, err := os.Lstat(dot); err == nil {
				if !slices.Contains(out, dot) {
					out = append(out, dot)
				}
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return out
}

// linkedGitDirs reads the ".git" file dot of the work tree dir
// ("gitdir: PATH") and returns that folder and, when it names one, its
// common folder (commondir).
func linkedGitDirs(dir, dot string) []string {
	b, err := readSmall(dot, 4096)
	if err != nil {
		return nil
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return nil
	}
	gitDir := strings.TrimSpace(rest)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(dir, gitDir)
	}
	out := []string{gitDir}
	if c, err := readSmall(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		out = append(out, filepath.Clean(common))
	}
	return out
}
