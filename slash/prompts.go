package slash

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// InitPrompt is the prompt of /init: a turn that writes AGENTS.md at the
// project's root, or updates the one there; args ("" for none) adds what
// else it should cover.
func InitPrompt(args string) string {
	p := `Write AGENTS.md for this project: the instructions an AI coding agent reads before working here (it goes into the agent's system prompt). If AGENTS.md already exists in the working directory, read it first and update it: keep what is still true, fix what is not, add what is missing.

First look at the project (read its README, build and package files, CI configuration and a few central source files; search rather than guess) so that every line is true of this repository. Then write AGENTS.md in the working directory with, as far as they apply:
- what the project is, in two or three sentences;
- how to build, run, test (a single test too), lint and format, with the exact commands;
- the layout: the main folders and packages and what each holds;
- the conventions the code follows (naming, errors, tests, commits) that are not obvious from one file;
- anything an agent must not do or must always do here.
Keep it short and concrete (commands in code blocks); no generic advice.`
	if a := strings.TrimSpace(args); a != "" {
		p += "\n\nThe user adds: " + a
	}
	return p
}

// ReviewLimit caps each git output /review puts in its prompt, in bytes
// (cut on a line boundary, with a note saying so).
const ReviewLimit = 256 << 10

// reviewTimeout bounds each git command of /review.
const reviewTimeout = 30 * time.Second

// gitSafe are the options every git command of /review runs with: the
// project's own configuration must not make a review run programs (a
// file system monitor, an external diff, text conversion filters) or a
// pager, and paths are shown as they are.
var gitSafe = []string{"--no-pager", "-c", "core.fsmonitor=false", "-c", "core.quotepath=off", "-c", "color.ui=never", "-c", "diff.external="}

// ReviewCommands are the git commands /review runs, as the prompt shows
// them (each runs with gitSafe's options too): the status, the changes
// not staged, the staged changes.
var ReviewCommands = [][]string{
	{"git", "status"},
	{"git", "diff", "--no-ext-diff", "--no-textconv"},
	{"git", "diff", "--cached", "--no-ext-diff", "--no-textconv"},
}

// ReviewPrompt is the prompt of /review in the project at cwd: the agent
// runs ReviewCommands there itself and puts their output (or their
// failure) in the prompt, which asks the model for a review without
// changing anything (the bridge runs the turn under plan mode's rules).
// args ("" for none) says what to look at. An error is returned only
// when git cannot be started at all.
func ReviewPrompt(ctx context.Context, cwd, args string) (string, error) {
	var b strings.Builder
	b.WriteString("Review the uncommitted changes of this project. The agent ran these git commands in the working directory just now:\n")
	for _, c := range ReviewCommands {
		out, err := runGit(ctx, cwd, c[1:])
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("/review needs git: %w", err)
		}
		fmt.Fprintf(&b, "\n$ %s\n", strings.Join(c, " "))
		switch {
		case err != nil && len(bytes.TrimSpace(out)) == 0:
			fmt.Fprintf(&b, "(failed: %v)\n", err)
		case err != nil:
			b.WriteString(tools.CodeFence("", string(out)) + "\n")
			fmt.Fprintf(&b, "(failed: %v)\n", err)
		case len(bytes.TrimSpace(out)) == 0:
			b.WriteString("(no output)\n")
		default:
			info := ""
			if c[1] == "diff" {
				info = "diff"
			}
			b.WriteString(tools.CodeFence(info, string(out)) + "\n")
		}
	}
	b.WriteString(`
Review these changes as a careful senior reviewer: bugs and wrong behaviour first, then risky or unclear code, missing or weak tests, and documentation that no longer matches. Read the changed files (and their callers) where the diff alone does not tell. This is a read-only turn: do not change any file or run commands that change anything (plan mode's rules apply). Answer with your findings, most important first, each with its file and line and what to do about it; say so plainly when you find nothing wrong.`)
	if a := strings.TrimSpace(args); a != "" {
		b.WriteString("\n\nThe user asks you to look at: " + a)
	}
	return b.String(), nil
}

// runGit runs git args (with gitSafe) in cwd and returns its output
// (stdout, then stderr), cut at ReviewLimit.
func runGit(ctx context.Context, cwd string, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, gitSafe...), args...)...)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "GIT_PAGER=cat", "PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	var stdout, stderr limitedBuffer
	stdout.limit, stderr.limit = ReviewLimit, ReviewLimit
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := append(stdout.buf.Bytes(), stderr.buf.Bytes()...)
	cut := stdout.cut || stderr.cut
	out, c := cutLines(out, ReviewLimit)
	if cut || c {
		out = append(out, fmt.Sprintf("[output cut at %d KiB]\n", ReviewLimit>>10)...)
	}
	if err != nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s", reviewTimeout)
	}
	return out, err
}

// limitedBuffer keeps the first limit bytes written to it.
type limitedBuffer struct {
	buf   bytes.Buffer
	limit int
	cut   bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.limit - l.buf.Len(); room < len(p) {
		l.cut = true
		l.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return l.buf.Write(p)
}

// cutLines returns b cut at n bytes on a line boundary when longer, and
// whether it was cut.
func cutLines(b []byte, n int) ([]byte, bool) {
	if len(b) <= n {
		return b, false
	}
	b = b[:n]
	if i := bytes.LastIndexByte(b, '\n'); i > 0 {
		b = b[:i+1]
	}
	return bytes.ToValidUTF8(b, nil), true
}
