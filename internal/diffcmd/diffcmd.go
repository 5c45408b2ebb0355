// Package diffcmd implements `dsh-acp diff OLD NEW`: it prints the hunks that
// edit cards would show between two files as a unified diff, in GNU
// diff -U3's format.
package diffcmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/dsh-acp/dsh-acp/hunks"
)

// Usage is the one-line synopsis printed on a usage error.
const Usage = "usage: dsh-acp diff OLD NEW"

// Run runs `dsh-acp diff` with args (the words after "diff": exactly the two
// paths OLD and NEW, used as given). It writes the unified diff to stdout and
// errors to stderr, and returns the exit code:
//   - 0: no hunks (the files are equal after LF normalization), nothing printed;
//   - 1: hunks printed as `--- OLD`, `+++ NEW` (no timestamps), then each
//     hunk with a GNU `diff -U3` header and body, `\ No newline at end of
//     file` after a line that lacks it; or, when either file has a NUL byte
//     or is not UTF-8 and their bytes differ, the one line
//     `Binary files OLD and NEW differ`;
//   - 2: a usage error, a file that cannot be read, or a failed write.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, Usage)
		return 2
	}
	oldPath, newPath := args[0], args[1]
	before, err := os.ReadFile(oldPath)
	if err != nil {
		fmt.Fprintf(stderr, "dsh-acp diff: %v\n", err)
		return 2
	}
	after, err := os.ReadFile(newPath)
	if err != nil {
		fmt.Fprintf(stderr, "dsh-acp diff: %v\n", err)
		return 2
	}
	if bytes.Equal(before, after) {
		return 0
	}
	hs, err := hunks.Compute(before, after)
	switch {
	case errors.Is(err, hunks.ErrBinary):
		_, err = fmt.Fprintf(stdout, "Binary files %s and %s differ\n", oldPath, newPath)
	case err != nil:
		fmt.Fprintf(stderr, "dsh-acp diff: %v\n", err)
		return 2
	case len(hs) == 0:
		return 0
	default:
		err = WriteUnified(stdout, oldPath, newPath, hs)
	}
	if err != nil {
		fmt.Fprintf(stderr, "dsh-acp diff: write: %v\n", err)
		return 2
	}
	return 1
}

// WriteUnified writes hs as a unified diff with the headers `--- oldName`
// and `+++ newName` (no timestamps), hunk headers as GNU `diff -U3` writes
// them, and NoNewlineMarker after a line that lacks its newline. It buffers
// its output and returns the first write error.
func WriteUnified(dst io.Writer, oldName, newName string, hs []hunks.Hunk) error {
	w := bufio.NewWriterSize(dst, 64<<10)
	w.WriteString("--- " + oldName + "\n+++ " + newName + "\n")
	var num []byte
	for _, h := range hs {
		num = append(num[:0], "@@ -"...)
		num = appendRange(num, h.OldStart, h.OldLines)
		num = append(num, " +"...)
		num = appendRange(num, h.NewStart, h.NewLines)
		num = append(num, " @@\n"...)
		w.Write(num)
		for _, l := range h.Lines {
			w.WriteByte(l.Kind)
			w.WriteString(l.Text)
			w.WriteByte('\n')
			if l.NoNewline {
				w.WriteString(hunks.NoNewlineMarker + "\n")
			}
		}
	}
	return w.Flush()
}

// appendRange appends a range as GNU diff writes it in a unified hunk
// header: "start" for one line, "start,count" otherwise (start is the line
// before the range when count is 0).
func appendRange(b []byte, start, count int) []byte {
	b = strconv.AppendInt(b, int64(start), 10)
	if count != 1 {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(count), 10)
	}
	return b
}
