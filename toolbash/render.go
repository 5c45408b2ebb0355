package toolbash

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// capture is what a finished command produced and how it ended, the input
// of resultText.
type capture struct {
	stdout, stderr       string
	stdoutCut, stderrCut bool
	stdoutPath           string // spill file, "" when unavailable
	stderrPath           string
	timedOut             bool
	timeoutMs            float64
	signal               string // "SIGTERM" when a signal ended the shell
	exitCode             int
	// sandboxLine says the sandbox blocked a write, or is "".
	sandboxLine string
}

// resultText is the foreground result the model sees:
//
//	stdout [+ "\n[output truncated; full output: PATH]"]
//	[+ "[stderr]\n" + stderr [+ truncation line]] (after a newline if needed)
//	"(no output)" when all that is empty
//	+ the sandbox line, when the sandbox blocked a write, on its own line
//	+ status markers, each on its own line: "[timed out after Nms]" (first,
//	  whenever the timeout fired), then "[killed by signal: SIG…]" or, for a
//	  non-zero exit, "[exit code: N]".
func resultText(c capture) string {
	var b strings.Builder
	b.WriteString(c.stdout)
	if c.stdoutCut {
		b.WriteString(truncatedLine(c.stdoutPath))
	}
	if c.stderr != "" || c.stderrCut {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n")
		b.WriteString(c.stderr)
		if c.stderrCut {
			b.WriteString(truncatedLine(c.stderrPath))
		}
	}
	if b.Len() == 0 {
		b.WriteString("(no output)")
	}
	if c.sandboxLine != "" {
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(c.sandboxLine)
	}
	var marks []string
	if c.timedOut {
		marks = append(marks, "[timed out after "+formatMs(c.timeoutMs)+"ms]")
	}
	if c.signal != "" {
		marks = append(marks, "[killed by signal: "+c.signal+"]")
	} else if c.exitCode != 0 {
		marks = append(marks, "[exit code: "+strconv.Itoa(c.exitCode)+"]")
	}
	if len(marks) > 0 {
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(strings.Join(marks, "\n"))
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// truncatedLine is appended to a stream that was cut.
func truncatedLine(path string) string {
	if path == "" {
		path = "(unavailable)"
	}
	return "\n[output truncated; full output: " + path + "]"
}

// formatMs writes a millisecond count as JSON (and JavaScript) would:
// 100, 1.5, 1e+21.
func formatMs(ms float64) string {
	b, err := json.Marshal(ms)
	if err != nil {
		return strconv.FormatFloat(ms, 'g', -1, 64)
	}
	return string(b)
}

var (
	signalMarkRE = regexp.MustCompile(`\n\[killed by signal: ([A-Z0-9]+)\]$`)
	exitMarkRE   = regexp.MustCompile(`\n\[exit code: (-?[0-9]+)\]$`)
)

// parseExit reads the exit status back from a result text: a final
// "\n[killed by signal: X]" gives signal X, a final "\n[exit code: N]"
// gives N, anything else exit code 0. Both need the newline before them
// and must end the text, so a program printing a marker as its whole
// output reads as exit 0 (a program printing one as its last line after
// other output is misread: a known residue).
func parseExit(text string) (code int, signal string) {
	if m := signalMarkRE.FindStringSubmatch(text); m != nil {
		return 0, m[1]
	}
	if m := exitMarkRE.FindStringSubmatch(text); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return n, ""
		}
	}
	return 0, ""
}

// Task status lines (bash_output, notices).
func statusRunning() string { return "[status: running]" }

// statusLine describes a finished background task: killed by a signal,
// killed (bash_kill, but the shell exited by itself), or completed.
func statusLine(code int, signal string, killed bool) string {
	switch {
	case signal != "":
		return "[status: killed by " + signal + "]"
	case killed:
		return "[status: killed]"
	}
	return "[status: completed, exit code: " + strconv.Itoa(code) + "]"
}

// liveLimitLine is the live view's one line once its cap (bytes) was
// reached: how many bytes it left out and where the full output is.
func liveLimitLine(limit, hidden int64, paths []string) string {
	where := "(unavailable)"
	if len(paths) > 0 {
		where = strings.Join(paths, ", ")
	}
	size := strconv.FormatInt(limit, 10) + " bytes"
	if limit%(1<<20) == 0 {
		size = strconv.FormatInt(limit>>20, 10) + " MiB"
	}
	return "[live view limit of " + size + " reached: " + strconv.FormatInt(hidden, 10) +
		" more bytes not shown; full output: " + where + "]"
}
