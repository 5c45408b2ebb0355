package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dsh-acp/dsh-acp/internal/agentcmd"
	"github.com/dsh-acp/dsh-acp/sandbox"
)

// RefPrefix is where checkpoints live in a repository: one ref per turn,
// RefPrefix + "<session>/<turn>", never a branch, tag, stash or the index.
const RefPrefix = "refs/dsh-acp/checkpoints/"

// gitEnv are the environment entries of every checkpoint git call, after
// agentcmd's (which has no system configuration, no prompt, no optional
// locks, a C locale): no global configuration (the user's global ignore
// file is still read through HOME) and a fixed identity for the commits.
var gitEnv = []string{
	"GIT_CONFIG_GLOBAL=" + os.DevNull,
	"GIT_AUTHOR_NAME=dsh-acp", "GIT_AUTHOR_EMAIL=dsh-acp@localhost",
	"GIT_COMMITTER_NAME=dsh-acp", "GIT_COMMITTER_EMAIL=dsh-acp@localhost",
}

// gitArgs come before every checkpoint git command's own (after
// agentcmd.GitSafe): no reflog entries, no split index for the agent's
// own index.
var gitArgs = []string{"-c", "core.logAllRefUpdates=false", "-c", "core.splitIndex=false"}

// runGit runs the agent's own git in dir through run (agentcmd: in the
// sandbox, with its program-running settings and the repository's
// filter drivers turned off: drivers, or looked up when nil), with gitEnv and then env, writing only
// below writable (none: read-only). It returns stdout; a failure's
// error carries git's stderr.
func runGit(ctx context.Context, run agentcmd.Runner, dir string, drivers, writable, env []string, args ...string) ([]byte, error) {
	var out, stderr bytes.Buffer
	c := agentcmd.Call{Dir: dir, Args: append(slices.Clone(gitArgs), args...), Env: append(slices.Clone(gitEnv), env...),
		Writable: writable, Stdout: &out, Stderr: &stderr, Drivers: drivers}
	if err := run.GitCall(ctx, c); err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}

// gitRepo is the repository a session's cwd is in: the work tree's top
// folder (also for a subfolder or a linked worktree) and its git dir
// (a linked worktree's own, which holds its index).
type gitRepo struct {
	top, gitDir string
	// run runs its git; writable are the folders a git that writes
	// (objects, refs, the agent's index) may write: the common git dir
	// and, for a linked worktree, its own.
	run      agentcmd.Runner
	writable []string
	// drivers are the repository's filter drivers, looked up again by
	// refresh at the start of each checkpoint's work (a command may have
	// added one since).
	drivers []string
}

// errNotRepo says the cwd is not inside a git work tree.
var errNotRepo = errors.New("not in a git work tree")

// findRepo finds the git work tree holding cwd. A cwd with no ".git"
// in it or above it is no work tree, and no git runs to say so.
func findRepo(ctx context.Context, run agentcmd.Runner, cwd string) (*gitRepo, error) {
	if !mayBeInRepo(cwd) {
		return nil, errNotRepo
	}
	out, err := runGit(ctx, run, cwd, nil, nil, nil, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotRepo, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 4 || lines[0] != "true" || lines[1] == "" {
		return nil, errNotRepo
	}
	common := lines[3]
	if !filepath.IsAbs(common) {
		common = filepath.Join(cwd, common)
	}
	r := &gitRepo{top: lines[1], gitDir: lines[2], run: run, writable: []string{filepath.Clean(common)}}
	if r.gitDir != r.writable[0] {
		r.writable = append(r.writable, r.gitDir)
	}
	return r, nil
}

// refresh looks up the repository's filter drivers for the git commands
// that follow (one lookup for a snapshot's several commands).
func (r *gitRepo) refresh(ctx context.Context) error {
	d, err := r.run.FilterDrivers(ctx, agentcmd.Call{Dir: r.top, Env: gitEnv})
	r.drivers = d
	return err
}

// git runs a git that only reads at the work tree's top.
func (r *gitRepo) git(ctx context.Context, env []string, args ...string) ([]byte, error) {
	return runGit(ctx, r.run, r.top, r.drivers, nil, env, args...)
}

// gitWrite runs a git that writes the repository's objects or refs, or
// the index env names (whose folder extra holds), at the work tree's top.
func (r *gitRepo) gitWrite(ctx context.Context, env []string, extra string, args ...string) ([]byte, error) {
	w := r.writable
	if extra != "" {
		w = append(slices.Clone(w), extra)
	}
	return runGit(ctx, r.run, r.top, r.drivers, w, env, args...)
}

// snapshot records the work tree (tracked and untracked files, not
// ignored ones) as a commit whose parent is parent ("" for none), using
// an index of the agent's own: cache, kept from the session's last
// snapshot, else (a first snapshot, or cache "") a copy of the user's
// index, so that files unchanged since are not hashed again. The user's
// index is never written. It returns the commit and its tree.
func (r *gitRepo) snapshot(ctx context.Context, msg, parent, cache string) (commit, tree string, err error) {
	idx := cache
	if idx == "" {
		tmp, err := os.MkdirTemp("", "dsh-acp-checkpoint-")
		if err != nil {
			return "", "", err
		}
		defer os.RemoveAll(tmp)
		idx = filepath.Join(tmp, "index")
	}
	if _, err := os.Stat(idx); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(idx), 0o700); err != nil {
			return "", "", err
		}
		if err := copyFile(filepath.Join(r.gitDir, "index"), idx); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", "", err
		}
	}
	env := []string{"GIT_INDEX_FILE=" + idx}
	links, err := r.gitlinks(ctx, env)
	if err != nil {
		return "", "", err
	}
	add := append([]string{"add", "--all", "--ignore-errors", "--", "."}, links...)
	if _, err := r.gitWrite(ctx, env, filepath.Dir(idx), add...); err != nil {
		// Start again from the user's index next time (a git killed by
		// the timeout may have left its lock too).
		_ = os.Remove(idx)
		_ = os.Remove(idx + ".lock")
		return "", "", err
	}
	out, err := r.gitWrite(ctx, env, filepath.Dir(idx), "write-tree")
	if err != nil {
		return "", "", err
	}
	tree = strings.TrimSpace(string(out))
	args := []string{"commit-tree", tree, "-m", msg}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	if out, err = r.gitWrite(ctx, env, "", args...); err != nil {
		return "", "", err
	}
	return strings.TrimSpace(string(out)), tree, nil
}

// gitlinks are pathspecs leaving out the submodules the index env names
// holds: git add would look into a changed one with a git of the
// submodule's own configuration, whose filter drivers are not turned
// off. A submodule's entry stays as the index has it.
func (r *gitRepo) gitlinks(ctx context.Context, env []string) ([]string, error) {
	out, err := r.git(ctx, env, "ls-files", "--stage", "-z")
	if err != nil {
		return nil, err
	}
	var specs []string
	for _, e := range strings.Split(string(out), "\x00") {
		head, path, ok := strings.Cut(e, "\t")
		if ok && strings.HasPrefix(head, "160000 ") {
			specs = append(specs, ":(exclude,literal)"+path)
		}
	}
	return specs, nil
}

// copyFile copies src to dst (created 0600).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// treeChange is one path that differs between two trees: its modes and
// blob ids on each side ("" and mode 0 where the path is absent).
type treeChange struct {
	path             string
	oldMode, newMode int
	oldBlob, newBlob string
}

// diffTrees lists the paths that differ between trees a and b (no rename
// detection, no diff program run).
func (r *gitRepo) diffTrees(ctx context.Context, a, b string) ([]treeChange, error) {
	out, err := r.git(ctx, nil, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", a, b)
	if err != nil {
		return nil, err
	}
	var cs []treeChange
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		head := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(head) < 5 {
			return nil, fmt.Errorf("git diff-tree: unexpected line %q", fields[i])
		}
		c := treeChange{path: fields[i+1], oldBlob: head[2], newBlob: head[3]}
		c.oldMode, _ = parseMode(head[0])
		c.newMode, _ = parseMode(head[1])
		if c.oldMode == 0 {
			c.oldBlob = ""
		}
		if c.newMode == 0 {
			c.newBlob = ""
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func parseMode(s string) (int, error) {
	n, err := strconv.ParseInt(s, 8, 32)
	return int(n), err
}

// blobSize is the size of blob id in bytes.
func (r *gitRepo) blobSize(ctx context.Context, id string) (int64, error) {
	out, err := r.git(ctx, nil, "cat-file", "-s", id)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
}

// blob reads blob id's bytes (no filter applied).
func (r *gitRepo) blob(ctx context.Context, id string) ([]byte, error) {
	return r.git(ctx, nil, "cat-file", "blob", id)
}

// hashFile is the blob id the file at path (below the top) would get
// when added (its attributes' line-ending conversion applied; filter
// drivers are off).
func (r *gitRepo) hashFile(ctx context.Context, path string) (string, error) {
	out, err := r.git(ctx, nil, "hash-object", "--", path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// updateRef points ref at commit; deleteRef removes ref.
func (r *gitRepo) updateRef(ctx context.Context, ref, commit string) error {
	_, err := r.gitWrite(ctx, nil, "", "update-ref", "--no-deref", ref, commit)
	return err
}

func (r *gitRepo) deleteRef(ctx context.Context, ref string) error {
	_, err := r.gitWrite(ctx, nil, "", "update-ref", "--no-deref", "-d", ref)
	return err
}

// ref is one checkpoint ref and the Unix time of its commit.
type ref struct {
	name string
	time int64
}

// refs lists the checkpoint refs below prefix, oldest first.
func (r *gitRepo) refs(ctx context.Context, prefix string) ([]ref, error) {
	out, err := r.git(ctx, nil, "for-each-ref", "--sort=committerdate", "--format=%(refname) %(committerdate:unix)", prefix)
	if err != nil {
		return nil, err
	}
	var rs []ref
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, t, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(t, 10, 64)
		rs = append(rs, ref{name: name, time: n})
	}
	return rs, nil
}

// mayBeInRepo reports whether git would find a work tree for cwd: a
// ".git" in it or above it (sandbox.DotGits). Without one, the agent's
// git, which runs with no GIT_DIR, would only say so; two sandboxed git
// processes per session were the cost of finding that out.
func mayBeInRepo(cwd string) bool { return len(sandbox.DotGits(cwd)) > 0 }
