package hunks

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// minimalTotals returns the removed and added line counts of a shortest
// line script between the LF-normalized texts, by quadratic LCS.
func minimalTotals(a, b string) (removed, added int) {
	la := splitKeep(strings.ReplaceAll(a, "\r\n", "\n"))
	lb := splitKeep(strings.ReplaceAll(b, "\r\n", "\n"))
	l := lcsLen(la, lb)
	return len(la) - l, len(lb) - l
}

// randomText returns a random text of lines drawn from a pool: a few
// repeated lines (ties) mixed with unique ones, sometimes CRLF, sometimes
// without the final newline.
func randomText(r *rand.Rand, n int, pool []string) []string {
	out := make([]string, n)
	for i := range out {
		if r.IntN(3) == 0 {
			out[i] = fmt.Sprintf("u%d", r.IntN(1000))
		} else {
			out[i] = pool[r.IntN(len(pool))]
		}
	}
	return out
}

func editLines(r *rand.Rand, a []string, edits int, pool []string) []string {
	b := append([]string(nil), a...)
	for range edits {
		i := r.IntN(len(b) + 1)
		switch r.IntN(3) {
		case 0:
			if i < len(b) {
				b[i] = pool[r.IntN(len(pool))]
			}
		case 1:
			b = append(b[:i], append([]string{fmt.Sprintf("n%d", r.IntN(50))}, b[i:]...)...)
		default:
			if i < len(b) {
				b = append(b[:i], b[i+1:]...)
			}
		}
	}
	return b
}

// render joins lines with "\n" (or "\r\n" when crlf), with or without the
// final newline.
func render(lines []string, crlf, final bool) string {
	nl := "\n"
	if crlf {
		nl = "\r\n"
	}
	s := strings.Join(lines, nl)
	if final && len(lines) > 0 {
		s += nl
	}
	return s
}

// randomPair returns a random before/after pair.
func randomPair(r *rand.Rand, maxLines int) (string, string) {
	pools := [][]string{{"a", "b"}, {"x", "", "}", "return nil"}, {"p", "q", "r", "s", "t", "u", "v"}}
	pool := pools[r.IntN(len(pools))]
	a := randomText(r, r.IntN(maxLines+1), pool)
	var b []string
	switch r.IntN(4) {
	case 0:
		b = randomText(r, r.IntN(maxLines+1), pool)
	default:
		b = editLines(r, a, 1+r.IntN(6), pool)
	}
	return render(a, r.IntN(5) == 0, r.IntN(4) != 0), render(b, r.IntN(5) == 0, r.IntN(4) != 0)
}

// checkMinimal checks hs's totals against the quadratic LCS minimum.
func checkMinimal(t testing.TB, before, after string, hs []Hunk) {
	t.Helper()
	r, a := totals(hs)
	wr, wa := minimalTotals(before, after)
	if r != wr || a != wa {
		t.Fatalf("totals -%d/+%d, minimal -%d/+%d\nbefore %q\nafter %q", r, a, wr, wa, clip(before), clip(after))
	}
}

func TestRandomPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		a, b := randomPair(r, 40)
		hs, err := Compute([]byte(a), []byte(b))
		if err != nil {
			t.Fatal(err)
		}
		checkHunks(t, a, b, hs)
		checkMinimal(t, a, b, hs)
	}
}

// TestHunkAfterShift checks ranges of a hunk that follows a change of
// length (insertions shift new line numbers).
func TestHunkAfterShift(t *testing.T) {
	a := numbered(40)
	b := strings.Replace(numbered(40, 30), "line2\n", "line2\nins1\nins2\n", 1)
	hs, err := Compute([]byte(a), []byte(b))
	if err != nil {
		t.Fatal(err)
	}
	want := []rng{
		{1, 5, 1, 7, lines(40, 1, 5), "line1\nline2\nins1\nins2\nline3\nline4\nline5", 3},
		{27, 7, 29, 7, lines(40, 27, 33), lines(40, 27, 33, 30), 32},
	}
	if got := ranges(hs); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	checkHunks(t, a, b, hs)
}

// FuzzCompute checks, on any input, that binary detection is right and that
// the hunks are valid, ordered, and minimal for small inputs.
func FuzzCompute(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"a\nb", "a\nb\n"}, {"\n", ""}, {"x\r\ny\r\n", "x\ny\nz"},
		{numbered(20), numbered(20, 3, 11)}, {"a\x00", "b"}, {"caf\xe9", "cafe"},
		{"a\na\na\nb\n", "a\nb\na\na\n"},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		hs, err := Compute(a, b)
		bin := bytes.IndexByte(a, 0) >= 0 || bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(a) || !utf8.Valid(b)
		if bin {
			if !errors.Is(err, ErrBinary) || hs != nil {
				t.Fatalf("binary input: %v, %v", len(hs), err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		checkHunks(t, string(a), string(b), hs)
		if bytes.Count(a, []byte{'\n'}) < 300 && bytes.Count(b, []byte{'\n'}) < 300 {
			checkMinimal(t, string(a), string(b), hs)
		}
	})
}

// gnuDiff returns the path of GNU diff, or "" when it is not installed.
func gnuDiff() string {
	p, err := exec.LookPath("diff")
	if err != nil {
		return ""
	}
	v, err := exec.Command(p, "--version").Output()
	if err != nil || !bytes.Contains(v, []byte("GNU diffutils")) {
		return ""
	}
	return p
}

// gnuTotals runs GNU diff (-U3 plus extra flags) on two LF-normalized texts
// and returns its removed and added line counts.
func gnuTotals(t testing.TB, diff, dir, a, b string, flags ...string) (removed, added int) {
	t.Helper()
	pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for p, s := range map[string]string{pa: a, pb: b} {
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(s, "\r\n", "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(diff, append(append([]string{"-U3"}, flags...), pa, pb)...).Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("diff: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for n := 0; sc.Scan(); n++ {
		if n < 2 { // the --- and +++ headers
			continue
		}
		switch line := sc.Text(); {
		case strings.HasPrefix(line, "-"):
			removed++
		case strings.HasPrefix(line, "+"):
			added++
		}
	}
	return removed, added
}

// TestAgainstGNUMinimal checks the changed-line totals against
// `diff --minimal` on random inputs, all under the bound.
func TestAgainstGNUMinimal(t *testing.T) {
	diff := gnuDiff()
	if diff == "" {
		t.Skip("GNU diff not installed: skipping the diff --minimal comparison")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(8, 9))
	for range 100 {
		a, b := randomPair(r, 300)
		hs, err := Compute([]byte(a), []byte(b))
		if err != nil {
			t.Fatal(err)
		}
		checkHunks(t, a, b, hs)
		gr, ga := gnuTotals(t, diff, dir, a, b, "--minimal")
		if rr, ra := totals(hs); rr != gr || ra != ga {
			t.Fatalf("totals -%d/+%d, diff --minimal -%d/+%d\nbefore %q\nafter %q", rr, ra, gr, ga, clip(a), clip(b))
		}
	}
}
