package hunks

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// numbered returns n lines "line1\n" … "lineN\n", with the 1-based lines in
// change replaced by "CHANGEDk".
func numbered(n int, change ...int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		changed := false
		for _, c := range change {
			changed = changed || c == i
		}
		if changed {
			fmt.Fprintf(&sb, "CHANGED%d\n", i)
		} else {
			fmt.Fprintf(&sb, "line%d\n", i)
		}
	}
	return sb.String()
}

// rng is a hunk's ranges and texts, for table comparisons.
type rng struct {
	oldStart, oldLines, newStart, newLines int
	oldText                                any // string, or nil for a nil OldText
	newText                                string
	firstChange                            int
}

func (r rng) String() string {
	return fmt.Sprintf("-%d,%d +%d,%d old=%q new=%q first=%d", r.oldStart, r.oldLines, r.newStart, r.newLines, r.oldText, r.newText, r.firstChange)
}

func ranges(hs []Hunk) []rng {
	out := make([]rng, len(hs))
	for i, h := range hs {
		r := rng{h.OldStart, h.OldLines, h.NewStart, h.NewLines, nil, h.NewText, h.FirstChange}
		if h.OldText != nil {
			r.oldText = *h.OldText
		}
		out[i] = r
	}
	return out
}

// lines joins lines from..to of numbered(n, change...) with "\n".
func lines(n, from, to int, change ...int) string {
	all := strings.Split(strings.TrimSuffix(numbered(n, change...), "\n"), "\n")
	return strings.Join(all[from-1:to], "\n")
}

// TestEdgeCases covers the edge cases of the hunk rules (see the
// package doc): first and last line, CRLF, final newlines, binary, ...
func TestEdgeCases(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	cases := []struct {
		name          string
		before, after string
		want          []rng
	}{
		{"8 lines, line 4 changed", numbered(8), numbered(8, 4), []rng{
			{1, 7, 1, 7, lines(8, 1, 7), lines(8, 1, 7, 4), 4},
		}},
		{"20 lines, line 10 changed", numbered(20), numbered(20, 10), []rng{
			{7, 7, 7, 7, lines(20, 7, 13), lines(20, 7, 13, 10), 10},
		}},
		{"20 lines, lines 3 and 16 changed", numbered(20), numbered(20, 3, 16), []rng{
			{1, 6, 1, 6, lines(20, 1, 6), lines(20, 1, 6, 3), 3},
			{13, 7, 13, 7, lines(20, 13, 19), lines(20, 13, 19, 16), 16},
		}},
		{"changes at 3 and 10 (gap of 6) merge", numbered(20), numbered(20, 3, 10), []rng{
			{1, 13, 1, 13, lines(20, 1, 13), lines(20, 1, 13, 3, 10), 3},
		}},
		{"changes at 3 and 11 (gap of 7) split", numbered(20), numbered(20, 3, 11), []rng{
			{1, 6, 1, 6, lines(20, 1, 6), lines(20, 1, 6, 3), 3},
			{8, 7, 8, 7, lines(20, 8, 14), lines(20, 8, 14, 11), 11},
		}},
		{"empty to content", "", "brand new\n", []rng{{0, 0, 1, 1, nil, "brand new", 1}}},
		{"whole file deleted", "gone\n", "", []rng{{1, 1, 0, 0, "gone", "", 1}}},
		{"no final newline on either side", "x", "y", []rng{{1, 1, 1, 1, "x", "y", 1}}},
		{"identical", "same\n", "same\n", nil},
		{"only the final newline added", "a\nb", "a\nb\n", []rng{
			{1, 2, 1, 2, "a\nb\n" + NoNewlineMarker, "a\nb", 2},
		}},
		{"only the final newline removed", "a\nb\n", "a\nb", []rng{
			{1, 2, 1, 2, "a\nb", "a\nb\n" + NoNewlineMarker, 2},
		}},
		{"only newline of a file removed", "\n", "", []rng{{1, 1, 0, 0, "", NoNewlineMarker, 1}}},
		{"newline into an empty file", "", "\n", []rng{{0, 0, 1, 1, nil, "", 1}}},
		{"final newline added with a new line", "a\nb", "a\nb\nc\n", []rng{
			{1, 2, 1, 3, "a\nb", "a\nb\nc", 2},
		}},
		{"first line changed (10 lines)", numbered(10), numbered(10, 1), []rng{
			{1, 4, 1, 4, lines(10, 1, 4), lines(10, 1, 4, 1), 1},
		}},
		{"last line changed (10 lines)", numbered(10), numbered(10, 10), []rng{
			{7, 4, 7, 4, lines(10, 7, 10), lines(10, 7, 10, 10), 10},
		}},
		{"insertion in the middle", numbered(10), strings.Replace(numbered(10), "line5\n", "line5\nNEW\n", 1), []rng{
			{3, 6, 3, 7, lines(10, 3, 8), "line3\nline4\nline5\nNEW\nline6\nline7\nline8", 6},
		}},
		{"insertion at the top", numbered(10), "NEW\n" + numbered(10), []rng{
			{1, 3, 1, 4, lines(10, 1, 3), "NEW\n" + lines(10, 1, 3), 1},
		}},
		{"append at the end", numbered(10), numbered(10) + "NEW\n", []rng{
			{8, 3, 8, 4, lines(10, 8, 10), lines(10, 8, 10) + "\nNEW", 11},
		}},
		{"deletion in the middle", numbered(10), strings.Replace(numbered(10), "line5\n", "", 1), []rng{
			{2, 7, 2, 6, lines(10, 2, 8), "line2\nline3\nline4\nline6\nline7\nline8", 5},
		}},
		{"deletion of the last line", numbered(10), numbered(9), []rng{
			{7, 4, 7, 3, lines(10, 7, 10), lines(10, 7, 9), 9},
		}},
		{"whole file of several lines deleted", numbered(4), "", []rng{
			{1, 4, 0, 0, lines(4, 1, 4), "", 1},
		}},
		{"CRLF file, one line changed", crlf(numbered(8)), crlf(numbered(8, 4)), []rng{
			{1, 7, 1, 7, lines(8, 1, 7), lines(8, 1, 7, 4), 4},
		}},
		{"CRLF rewrite of an LF file, one line changed", numbered(8), crlf(numbered(8, 4)), []rng{
			{1, 7, 1, 7, lines(8, 1, 7), lines(8, 1, 7, 4), 4},
		}},
		{"CRLF twin of an LF file", numbered(8), crlf(numbered(8)), nil},
		{"lone CR is kept", "a\rb\n", "a\rc\n", []rng{{1, 1, 1, 1, "a\rb", "a\rc", 1}}},
		{"1 MB line, one byte changed", big + "\n", big[:1000] + "y" + big[1001:] + "\n", []rng{
			{1, 1, 1, 1, big, big[:1000] + "y" + big[1001:], 1},
		}},
		{"1 MB line without final newline", "a\n" + big, "a\n" + big + "z", []rng{
			{1, 2, 1, 2, "a\n" + big, "a\n" + big + "z", 2},
		}},
		{"changed last line without newline", numbered(5) + "end", numbered(5) + "END", []rng{
			{3, 4, 3, 4, "line3\nline4\nline5\nend", "line3\nline4\nline5\nEND", 6},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs, err := Compute([]byte(c.before), []byte(c.after))
			if err != nil {
				t.Fatal(err)
			}
			got := ranges(hs)
			if len(got) != len(c.want) {
				t.Fatalf("got %d hunks %v, want %d %v", len(got), clipRanges(got), len(c.want), clipRanges(c.want))
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("hunk %d:\n got %v\nwant %v", i, clip(got[i].String()), clip(c.want[i].String()))
				}
			}
			checkHunks(t, c.before, c.after, hs)
		})
	}
}

func clipRanges(rs []rng) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = clip(r.String())
	}
	return out
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func TestLinesBody(t *testing.T) {
	hs, err := Compute([]byte("a\nb\nc\nd\ne"), []byte("a\nB\nc\nd\nE"))
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 {
		t.Fatalf("got %d hunks", len(hs))
	}
	want := []Line{
		{' ', "a", false}, {'-', "b", false}, {'+', "B", false},
		{' ', "c", false}, {' ', "d", false},
		{'-', "e", true}, {'+', "E", true},
	}
	if fmt.Sprint(hs[0].Lines) != fmt.Sprint(want) {
		t.Fatalf("Lines = %v, want %v", hs[0].Lines, want)
	}
	// Removed lines come before added lines inside a block.
	hs, _ = Compute([]byte("k\nx\ny\nk\n"), []byte("k\np\nq\nk\n"))
	var kinds string
	for _, l := range hs[0].Lines {
		kinds += string(l.Kind)
	}
	if kinds != " --++ " {
		t.Fatalf("kinds %q, want %q", kinds, " --++ ")
	}
}

func TestBinary(t *testing.T) {
	for _, c := range []struct{ name, a, b string }{
		{"NUL before", "a\x00b\n", "a\n"},
		{"NUL after", "a\n", "a\n\x00"},
		{"invalid UTF-8", "caf\xe9\n", "cafe\n"},
		{"truncated rune", "a\n", "a\n\xe2\x82"},
		{"identical binary", "\x00", "\x00"},
	} {
		hs, err := Compute([]byte(c.a), []byte(c.b))
		if !errors.Is(err, ErrBinary) || hs != nil {
			t.Errorf("%s: got %v, %v; want nil, ErrBinary", c.name, hs, err)
		}
	}
	// Valid multi-byte UTF-8 is text.
	hs, err := Compute([]byte("café\n"), []byte("cafë\n"))
	if err != nil || len(hs) != 1 || *hs[0].OldText != "café" {
		t.Fatalf("UTF-8 text: %v, %v", ranges(hs), err)
	}
}

// TestManyDistinctLines goes past 65,536 (and 1,112,064 is go-diff's panic
// point, tested in the long mode) distinct lines, with one change in the
// middle and one near each end.
func TestManyDistinctLines(t *testing.T) {
	n := 70_000
	if !testing.Short() {
		n = 200_000
	}
	var a, b strings.Builder
	for i := range n {
		fmt.Fprintf(&a, "distinct line %d\n", i)
		switch i {
		case 1, n / 2, n - 2:
			fmt.Fprintf(&b, "changed line %d\n", i)
		default:
			fmt.Fprintf(&b, "distinct line %d\n", i)
		}
	}
	hs, err := Compute([]byte(a.String()), []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 3 {
		t.Fatalf("got %d hunks: %v", len(hs), ranges(hs))
	}
	for i, want := range []int{2, n/2 + 1, n - 1} {
		if hs[i].FirstChange != want {
			t.Errorf("hunk %d: FirstChange %d, want %d", i, hs[i].FirstChange, want)
		}
	}
	checkHunks(t, a.String(), b.String(), hs)
	// Every line changed and many distinct lines: a full replacement.
	hs, err = Compute([]byte(a.String()), []byte(strings.ReplaceAll(a.String(), "distinct", "other")))
	if err != nil {
		t.Fatal(err)
	}
	if r, ad := totals(hs); r != n || ad != n || len(hs) != 1 {
		t.Fatalf("rewrite: %d hunks, -%d +%d", len(hs), r, ad)
	}
}

// TestInputsUntouched checks that Compute neither writes nor keeps its
// inputs.
func TestInputsUntouched(t *testing.T) {
	a := []byte("one\r\ntwo\r\n")
	b := []byte("one\r\nTWO\r\n")
	hs, err := Compute(a, b)
	if err != nil {
		t.Fatal(err)
	}
	a[0], b[0] = 'X', 'X'
	if string(a) != "Xne\r\ntwo\r\n" || *hs[0].OldText != "one\ntwo" || hs[0].NewText != "one\nTWO" {
		t.Fatalf("inputs or hunks changed: %q %q %v", a, b, ranges(hs))
	}
}

// TestSlideTies checks the canonical placement among equal scripts: a
// duplicated line's insertion is reported after the run it extends.
func TestSlideTies(t *testing.T) {
	hs, err := Compute([]byte("a\nb\nb\nc\n"), []byte("a\nb\nb\nb\nc\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Line{{' ', "a", false}, {' ', "b", false}, {' ', "b", false}, {'+', "b", false}, {' ', "c", false}}
	if fmt.Sprint(hs[0].Lines) != fmt.Sprint(want) {
		t.Fatalf("Lines = %v, want %v", hs[0].Lines, want)
	}
}

// TestChangeLinesInOneHunk: changes at lines 40 and 45 share a hunk (at
// most 2*Context lines apart) but each gets its line; a removal at the end
// of the file points at the new last line.
func TestChangeLinesInOneHunk(t *testing.T) {
	var before, after strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&before, "line %d\n", i)
		switch i {
		case 40, 45:
			fmt.Fprintf(&after, "LINE %d\n", i)
		case 60:
		default:
			fmt.Fprintf(&after, "line %d\n", i)
		}
	}
	hs, err := Compute([]byte(before.String()), []byte(after.String()))
	if err != nil || len(hs) != 2 {
		t.Fatalf("%d hunks, %v", len(hs), err)
	}
	if got := hs[0].ChangeLines(); !slices.Equal(got, []int{40, 45}) {
		t.Errorf("first hunk: %v, want [40 45]", got)
	}
	if got := hs[1].ChangeLines(); !slices.Equal(got, []int{59}) || hs[1].FirstChange != 59 {
		t.Errorf("removal at the end: %v (FirstChange %d), want [59]", got, hs[1].FirstChange)
	}
}
