package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// denialPhrases are the texts (lower case) with which programs report a
// refused write. Landlock refuses with EACCES ("Permission denied"); some
// tools print the errno name or EPERM's text for it.
var denialPhrases = []string{"permission denied", "operation not permitted", "eacces", "eperm"}

// Blocked finds, in the output of a command that failed (the caller
// checks that it failed) and that ran in dir under p, a write the sandbox
// refused, and returns its path. The rule, so that it does not cry wolf:
//
//  1. a line of the output reports a denial (see denialPhrases, any case);
//  2. the same line names a path: a quoted string ('…', "…", ‘…’, `…'),
//     the word right before the denial ("NAME: Permission denied"), or a
//     word holding a slash or starting with ~ (trailing punctuation
//     dropped); a relative one is taken against dir, ~ against $HOME;
//  3. that path (symlinks resolved as far as it exists) is outside what p
//     lets a command write (Allows);
//  4. the agent itself, unconfined, could write it (access(2) W_OK on the
//     path, or on its nearest existing parent when it does not exist), so
//     the refusal was the sandbox's and not the file's permissions.
//
// Only the first such path is returned; ok is false when there is none.
func (p Policy) Blocked(output, dir string) (path string, ok bool) {
	if p.Config.mode() == Off {
		return "", false
	}
	for _, line := range strings.Split(output, "\n") {
		if !denial(line) {
			continue
		}
		for _, c := range pathCandidates(line) {
			abs := expand(c, dir)
			if abs == "" || p.Allows(abs, dir) || !agentCanWrite(abs) {
				continue
			}
			return abs, true
		}
	}
	return "", false
}

func denial(line string) bool {
	l := strings.ToLower(line)
	for _, ph := range denialPhrases {
		if strings.Contains(l, ph) {
			return true
		}
	}
	return false
}

// pathCandidates returns the quoted strings of line, the word before a
// denial, then its words that look like paths.
func pathCandidates(line string) []string {
	var out []string
	pairs := [][2]string{{"'", "'"}, {"\"", "\""}, {"‘", "’"}, {"`", "'"}, {"“", "”"}}
	for _, q := range pairs {
		rest := line
		for {
			i := strings.Index(rest, q[0])
			if i < 0 {
				break
			}
			rest = rest[i+len(q[0]):]
			j := strings.Index(rest, q[1])
			if j < 0 {
				break
			}
			if s := rest[:j]; s != "" && !strings.ContainsAny(s, "\n") {
				out = append(out, s)
			}
			rest = rest[j+len(q[1]):]
		}
	}
	// "NAME: Permission denied" (bash's redirections): the word before the
	// denial.
	l := strings.ToLower(line)
	for _, ph := range denialPhrases {
		if i := strings.Index(l, ph); i > 0 {
			if f := strings.Fields(strings.TrimRight(line[:i], ": ")); len(f) > 0 {
				if w := strings.Trim(f[len(f)-1], "'\"`‘’“”()[]{}<>,;:"); w != "" {
					out = append(out, w)
				}
			}
		}
	}
	for _, w := range strings.Fields(line) {
		w = strings.Trim(w, "'\"`‘’“”()[]{}<>,;")
		w = strings.TrimRight(w, ":.")
		if strings.Contains(w, "/") || strings.HasPrefix(w, "~") {
			out = append(out, w)
		}
	}
	return out
}

// expand makes c absolute: ~ and ~/x against $HOME, relative against
// dir; "" for what cannot be a path.
func expand(c, dir string) string {
	if strings.ContainsRune(c, 0) || strings.Contains(c, "://") {
		return ""
	}
	if c == "~" || strings.HasPrefix(c, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		c = filepath.Join(home, strings.TrimPrefix(c, "~"))
	}
	if !filepath.IsAbs(c) {
		if dir == "" {
			return ""
		}
		c = filepath.Join(dir, c)
	}
	return filepath.Clean(c)
}

// agentCanWrite reports whether this (unconfined) process may write path,
// or create it in its nearest existing parent directory.
func agentCanWrite(path string) bool {
	for p := path; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			return writable(p)
		}
		if p == filepath.Dir(p) {
			return false
		}
	}
}
