package toolbash

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// capture is what a finished command produced and how it ended, the input
// of resultText.
type capture struct {
	stdout, stderr       string
	stdoutCut, stderrCut bool
	stdoutPath           string // spill file, "" when unavailable
	stderrPath           string
	// stdoutSaved and stderrSaved are the bytes the spill files hold when
	// the spill limit cut them short, else 0.
	stdoutSaved, stderrSaved int64
	timedOut                 bool
	timeoutMs                float64
	signal                   string // "SIGTERM" when a signal ended the shell
	exitCode                 int
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
	text, _ := renderResult(c)
	return text
}

// renderResult returns resultText and how many of its leading bytes are
// the command's output (stdout, its truncation line and the stderr
// section): the rest, after a newline when the output lacks one, is the
// notes ("(no output)", the sandbox line, the status markers).
func renderResult(c capture) (text string, outputLen int) {
	var b strings.Builder
	b.WriteString(c.stdout)
	if c.stdoutCut {
		b.WriteString(truncatedLine(c.stdoutPath, c.stdoutSaved))
	}
	if c.stderr != "" || c.stderrCut {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n")
		b.WriteString(c.stderr)
		if c.stderrCut {
			b.WriteString(truncatedLine(c.stderrPath, c.stderrSaved))
		}
	}
	outputLen = len(strings.ToValidUTF8(b.String(), "\uFFFD"))
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
	return strings.ToValidUTF8(b.String(), "\uFFFD"), outputLen
}

// truncatedLine is appended to a stream that was cut; saved is how much
// of it its spill file holds when the spill limit cut that short (0: all
// of it).
func truncatedLine(path string, saved int64) string {
	if path == "" {
		path = "(unavailable)"
	} else if saved > 0 {
		return "\n[output truncated; its first " + strconv.FormatInt(saved, 10) + " bytes (the spill limit): " + path + "]"
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
	signalMarkRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n\[killed by signal: ([A-Z0-9]+)\]$`) })
	exitMarkRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n\[exit code: (-?[0-9]+)\]$`) })
)

// parseExit reads the exit status back from a result text: a final
// "\n[killed by signal: X]" gives signal X, a final "\n[exit code: N]"
// gives N, anything else exit code 0. Both need the newline before them
// and must end the text, so a program printing a marker as its whole
// output reads as exit 0 (a program printing one as its last line after
// other output is misread: a known residue).
func parseExit(text string) (code int, signal string) {
	if m := signalMarkRE().FindStringSubmatch(text); m != nil {
		return 0, m[1]
	}
	if m := exitMarkRE().FindStringSubmatch(text); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return n, ""
		}
	}
	return 0, ""
}

// resultMeta is the Meta of a foreground result (kept in the session log):
// how many leading bytes of its text are the command's output, and how it
// ended (ExitCode, or Signal when a signal ended it), so that its card
// need not read them back from the text.
type resultMeta struct {
	Output   int    `json:"output"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
}

// newResultMeta is the Meta of c's result, whose output is outputLen bytes.
func newResultMeta(c capture, outputLen int) []byte {
	m := resultMeta{Output: outputLen, Signal: c.signal}
	if c.signal == "" {
		code := c.exitCode
		m.ExitCode = &code
	}
	b, _ := json.Marshal(m)
	return b
}

var (
	statusLineRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\n\[(?:killed by signal: [A-Z0-9]+|exit code: -?[0-9]+)\]$`)
	})
	timeoutLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n\[timed out after [^\]\n]*ms\]$`) })
)

// splitResult splits a foreground result's text into the command's output
// and the notes after it ("(no output)", status markers), and says how it
// ended. The Meta, when it fits the text, tells exactly; a result logged
// without it is read back from the text: the exit as parseExit reads it,
// the final timeout and status markers and a lone "(no output)" as notes.
func splitResult(text string, meta []byte) (output, notes string, code *int, signal string) {
	var m resultMeta
	if len(meta) > 0 && json.Unmarshal(meta, &m) == nil && m.Output >= 0 && m.Output <= len(text) && (m.ExitCode != nil || m.Signal != "") {
		return text[:m.Output], strings.TrimPrefix(text[m.Output:], "\n"), m.ExitCode, m.Signal
	}
	n, sig := parseExit(text)
	if sig == "" {
		code = &n
	}
	body := text
	for _, re := range []*regexp.Regexp{statusLineRE(), timeoutLineRE()} {
		if loc := re.FindStringIndex(body); loc != nil {
			body = body[:loc[0]]
		}
	}
	if body == "(no output)" {
		return "", text, code, sig
	}
	return body, strings.TrimPrefix(text[len(body):], "\n"), code, sig
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

// omittedLine is the one line (a Note) a card shows where it left output
// out: how many bytes, the card's limit (bytes) and where the full output
// is.
func omittedLine(limit, omitted int64, paths []string) string {
	where := "(unavailable)"
	if len(paths) > 0 {
		where = strings.Join(paths, ", ")
	}
	size := strconv.FormatInt(limit, 10) + " bytes"
	if limit%(1<<20) == 0 {
		size = strconv.FormatInt(limit>>20, 10) + " MiB"
	}
	return "[output truncated; " + strconv.FormatInt(omitted, 10) + " bytes left out here (a card shows at most " + size +
		" of output); full output: " + where + "]"
}

// cutLineRE matches the line truncatedLine appends to a cut stream.
var cutLineRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\[output truncated; full output: ([^\]\n]*)\]$`)
})

// cutPaths reports whether a result's output has a truncation line and
// returns the full-output paths those lines name, in order (stdout's
// first), "(unavailable)" left out.
func cutPaths(output string) (cut bool, paths []string) {
	for _, m := range cutLineRE().FindAllStringSubmatch(output, 2) {
		cut = true
		if m[1] != "(unavailable)" {
			paths = append(paths, m[1])
		}
	}
	return cut, paths
}
