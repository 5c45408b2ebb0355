package slash

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

// Git runs git with args in dir, its output going to stdout and stderr,
// as the agent runs its own commands: in the sandbox, read-only, with
// the scrubbed environment and with every setting that makes git start
// another program (a pager, a file system monitor, hooks, an external
// diff, filters) turned off. Errors: exec.ErrNotFound (wrapped) when git
// is missing, a non-zero exit, ctx's error.
type Git func(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) error

// ReviewCommands are the git commands /review runs, as the prompt shows
// them (Git adds its own options to turn off what runs programs): the
// status, the changes not staged, the staged changes.
var ReviewCommands = [][]string{
	{"git", "status"},
	{"git", "diff", "--no-ext-diff", "--no-textconv"},
	{"git", "diff", "--cached", "--no-ext-diff", "--no-textconv"},
}

// ReviewPrompt is the prompt of /review in the project at cwd: the agent
// runs ReviewCommands there itself through git and puts their output
// (or their failure) in the prompt, which asks the model for a review without
// changing anything (the bridge runs the turn under plan mode's rules).
// args ("" for none) says what to look at. An error is returned only
// when git cannot be started at all.
func ReviewPrompt(ctx context.Context, git Git, cwd, args string) (string, error) {
	var b strings.Builder
	b.WriteString("Review the uncommitted changes of this project. The agent ran these git commands in the working directory just now:\n")
	for _, c := range ReviewCommands {
		out, err := runGit(ctx, git, cwd, c[1:])
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

// runGit runs git args in cwd through git and returns its output
// (stdout, then stderr), cut at ReviewLimit.
func runGit(ctx context.Context, git Git, cwd string, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	var stdout, stderr limitedBuffer
	stdout.limit, stderr.limit = ReviewLimit, ReviewLimit
	err := git(ctx, cwd, args, &stdout, &stderr)
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
