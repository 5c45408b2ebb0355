package agentcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// GitSafe are the options every git command of the agent's runs with,
// before its own: no pager, no file system monitor, no hooks, no
// external diff program, no automatic maintenance, no transport that
// runs a command, no signing program (commits and tags unsigned), an
// editor that changes nothing, paths shown as they are, no colour, no
// look into submodules (status and diff would run a git there under the
// submodule's own configuration, whose filter drivers are not turned
// off). Text conversion
// (--no-textconv) and external diff drivers (--no-ext-diff) are options
// of the diff commands, which the caller adds; filter drivers are
// turned off by Git for each driver the configuration defines.
var GitSafe = []string{
	"--no-pager",
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.pager=cat",
	"-c", "diff.external=",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "protocol.ext.allow=never",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
	"-c", "core.editor=true",
	"-c", "sequence.editor=true",
	"-c", "core.quotepath=off",
	"-c", "color.ui=never",
	"-c", "diff.ignoreSubmodules=all",
}

// Git runs `git GitSafe... args...` in dir, read-only, with every filter
// driver the repository's configuration defines (filter.NAME.clean,
// .smudge, .process) set to nothing for the call, so that git runs none
// of them; its output goes to stdout and stderr. The errors are Run's.
// Its signature is the one package slash takes for /review's git.
func (r Runner) Git(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) error {
	return r.GitCall(ctx, Call{Dir: dir, Args: args, Stdout: stdout, Stderr: stderr})
}

// GitCall is Git for a call with its own environment entries and
// writable folders (c.Path is ignored: it is git; c.Args are git's
// arguments after GitSafe).
func (r Runner) GitCall(ctx context.Context, c Call) error {
	drivers := c.Drivers
	if drivers == nil {
		var err error
		if drivers, err = r.FilterDrivers(ctx, c); err != nil {
			return err
		}
	}
	args := append([]string{}, GitSafe...)
	for _, d := range drivers {
		args = append(args, "-c", "filter."+d+".clean=", "-c", "filter."+d+".smudge=",
			"-c", "filter."+d+".process=", "-c", "filter."+d+".required=false")
	}
	c.Path, c.Args = "git", append(args, c.Args...)
	return r.Run(ctx, c)
}

// ErrFilterName says the repository's configuration defines a filter
// driver whose name holds "=", which no -c option can turn off; the
// agent's git does not run there.
var ErrFilterName = errors.New("a filter driver named with \"=\" cannot be turned off; the agent's git does not run in this repository")

// FilterDrivers returns the names of the filter drivers the
// configuration git reads in c.Dir (with c.Env) defines, each once,
// never nil (reading configuration runs no program); ErrFilterName
// (wrapped, with the name) for a name holding "=".
func (r Runner) FilterDrivers(ctx context.Context, c Call) ([]string, error) {
	var out bytes.Buffer
	q := Call{Path: "git", Dir: c.Dir, Env: c.Env, Stdout: &out,
		Args: append(append([]string{}, GitSafe...), "config", "--null", "--name-only", "--get-regexp", `^filter\.`)}
	if err := r.Run(ctx, q); err != nil && ExitCode(err) < 0 {
		// Exit 1 is "no such key" (none defined); outside a repository
		// only the global configuration is read.
		return nil, err
	}
	names := []string{}
	seen := map[string]bool{}
	for _, key := range strings.Split(out.String(), "\x00") {
		// filter.NAME.KEY, NAME may hold dots.
		rest, ok := strings.CutPrefix(key, "filter.")
		i := strings.LastIndexByte(rest, '.')
		if !ok || i <= 0 {
			continue
		}
		name := rest[:i]
		if strings.Contains(name, "=") {
			// -c splits its argument at the first "=": such a
			// driver could not be turned off.
			return nil, fmt.Errorf("%w: %q", ErrFilterName, name)
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names, nil
}
