package hunks

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// apply applies hs to before (LF-normalized) using only the hunk ranges and
// bodies, checking that every context and removed line matches before.
func apply(before string, hs []Hunk) (string, error) {
	old := splitKeep(strings.ReplaceAll(before, "\r\n", "\n"))
	var out strings.Builder
	at := 0 // next old line (0-based) to copy
	for n, h := range hs {
		from := h.OldStart - 1
		if h.OldLines == 0 {
			from = h.OldStart
		}
		if from < at {
			return "", fmt.Errorf("hunk %d starts at old line %d, before line %d", n, h.OldStart, at+1)
		}
		for ; at < from; at++ {
			out.WriteString(old[at])
		}
		for _, l := range h.Lines {
			text := l.Text
			if !l.NoNewline {
				text += "\n"
			}
			switch l.Kind {
			case ' ', '-':
				if at >= len(old) || old[at] != text {
					return "", fmt.Errorf("hunk %d: line %q does not match old line %d", n, text, at+1)
				}
				at++
				if l.Kind == ' ' {
					out.WriteString(text)
				}
			case '+':
				out.WriteString(text)
			default:
				return "", fmt.Errorf("hunk %d: bad kind %q", n, l.Kind)
			}
		}
	}
	for ; at < len(old); at++ {
		out.WriteString(old[at])
	}
	return out.String(), nil
}

// splitKeep splits s into lines that keep their "\n".
func splitKeep(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// checkHunks checks every structural property of hs for before → after:
// applying gives after, ranges are in order and do not overlap, counts and
// texts agree with the bodies, and no hunk's two texts read the same.
func checkHunks(t testing.TB, before, after string, hs []Hunk) {
	t.Helper()
	got, err := apply(before, hs)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	want := strings.ReplaceAll(after, "\r\n", "\n")
	if got != want {
		t.Fatalf("apply gives %q, want %q", clip(got), clip(want))
	}
	prevOld, prevNew := 0, 0
	for n, h := range hs {
		var oldL, newL []string
		var changed bool
		for _, l := range h.Lines {
			if l.Kind != ' ' {
				changed = true
			}
			if l.Kind != '+' {
				oldL = append(oldL, l.Text)
			}
			if l.Kind != '-' {
				newL = append(newL, l.Text)
			}
		}
		if !changed {
			t.Fatalf("hunk %d has no change", n)
		}
		if len(oldL) != h.OldLines || len(newL) != h.NewLines {
			t.Fatalf("hunk %d: counts %d/%d, body has %d/%d", n, h.OldLines, h.NewLines, len(oldL), len(newL))
		}
		oldEnd := h.OldStart + h.OldLines - 1
		if h.OldLines == 0 {
			oldEnd = h.OldStart
		}
		newEnd := h.NewStart + h.NewLines - 1
		if h.NewLines == 0 {
			newEnd = h.NewStart
		}
		if n > 0 && (h.OldStart <= prevOld || h.NewStart <= prevNew) {
			t.Fatalf("hunk %d (-%d +%d) overlaps or precedes the previous one ending at -%d +%d", n, h.OldStart, h.NewStart, prevOld, prevNew)
		}
		prevOld, prevNew = oldEnd, newEnd
		if (h.OldText == nil) != (h.OldLines == 0) {
			t.Fatalf("hunk %d: OldText nil is %v with %d old lines", n, h.OldText == nil, h.OldLines)
		}
		wantOld := strings.Join(oldL, "\n")
		wantNew := strings.Join(newL, "\n")
		if h.OldText != nil && *h.OldText != wantOld && *h.OldText != wantOld+"\n"+NoNewlineMarker {
			t.Fatalf("hunk %d: OldText %q, body gives %q", n, clip(*h.OldText), clip(wantOld))
		}
		if h.NewText != wantNew && h.NewText != wantNew+"\n"+NoNewlineMarker && !(h.NewLines == 0 && h.NewText == NoNewlineMarker) {
			t.Fatalf("hunk %d: NewText %q, body gives %q", n, clip(h.NewText), clip(wantNew))
		}
		if h.OldText != nil && *h.OldText == h.NewText {
			t.Fatalf("hunk %d: both texts read %q", n, clip(h.NewText))
		}
		if h.FirstChange < 1 || h.FirstChange < h.NewStart || h.FirstChange > max(1, newEnd+1) {
			t.Fatalf("hunk %d: FirstChange %d outside +%d,%d", n, h.FirstChange, h.NewStart, h.NewLines)
		}
		checkChangeLines(t, n, h, countNewLines(after))
	}
}

// totals returns the removed and added line counts of hs.
func totals(hs []Hunk) (removed, added int) {
	for _, h := range hs {
		r, a := h.Changed()
		removed, added = removed+r, added+a
	}
	return removed, added
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// lcsLen is the length of the longest common subsequence of a and b
// (quadratic dynamic programming; for small inputs only).
func lcsLen[T comparable](a, b []T) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// countNewLines is the number of lines of text as hunks counts them.
func countNewLines(text string) int {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// checkChangeLines checks ChangeLines against the body walked on its own:
// one line per block, the first one FirstChange, each the new line of the
// block's first added line, or for a removal only the line after it (the
// last line of a file of total lines when nothing follows, 1 when empty).
func checkChangeLines(t testing.TB, n int, h Hunk, total int) {
	t.Helper()
	var want []int
	line := h.NewStart - 1 // the new line of the last new-side line seen
	if h.NewLines == 0 {
		line = h.NewStart // the line before the (empty) range
	}
	for i := 0; i < len(h.Lines); i++ {
		if h.Lines[i].Kind == ' ' {
			line++
			continue
		}
		j := i
		for j < len(h.Lines) && h.Lines[j].Kind == '-' {
			j++
		}
		at := line + 1
		if at > total {
			at = max(1, total)
		}
		want = append(want, at)
		for i < len(h.Lines) && h.Lines[i].Kind != ' ' {
			if h.Lines[i].Kind == '+' {
				line++
			}
			i++
		}
		i--
	}
	got := h.ChangeLines()
	if len(got) == 0 || got[0] != h.FirstChange || !slices.Equal(got, want) {
		t.Fatalf("hunk %d: ChangeLines %v, want %v (FirstChange %d)", n, got, want, h.FirstChange)
	}
}
