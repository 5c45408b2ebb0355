package hunks

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/hunks/internal/benchcases"
)

// crossCase is a generated input pair of a few thousand lines.
type crossCase struct {
	name string
	a, b string
}

func crossCases() []crossCase {
	r := rand.New(rand.NewPCG(11, 12))
	var out []crossCase
	add := func(name string, a, b []string) {
		out = append(out, crossCase{name, string(benchcases.Join(a)), string(benchcases.Join(b))})
	}
	for i := range 6 {
		seed := uint64(100 + i)
		n := 1000 + r.IntN(3000)
		a := benchcases.Code(seed, n)
		edits := []int{1, 10, 100, 300, 500, n / 2}[i]
		add(fmt.Sprintf("scatter %d/%d", edits, n), a, benchcases.Scatter(a, edits, seed))
	}
	for i := range 3 {
		n := 1000 + 1000*i
		add(fmt.Sprintf("rewrite %d", n), benchcases.Code(uint64(200+i), n), benchcases.Code(uint64(300+i), n))
	}
	a := benchcases.Code(400, 3000)
	moved := append(append(append([]string{}, a[:500]...), a[1200:2000]...), append(a[500:1200], a[2000:]...)...)
	add("block move 700/3000", a, moved)
	// Highly repetitive text: few distinct lines, many ties.
	pool := []string{"", "}", "\t}", "x"}
	rep := make([]string, 3000)
	for i := range rep {
		rep[i] = pool[r.IntN(len(pool))]
	}
	add("repetitive 3000", rep, editLines(r, rep, 60, pool))
	other := make([]string, 3000)
	for i := range other {
		other[i] = pool[r.IntN(len(pool))]
	}
	add("repetitive rewrite 3000", rep, other)
	return out
}

// TestCrossCheckGNU compares the changed-line totals with GNU `diff -U3` and
// `diff -U3 --minimal` on generated inputs: never below the minimum; equal to
// it whenever it is within the bound, and then equal to GNU's wherever GNU's
// result is minimal; beyond the bound (where a coarser result is allowed)
// within 2% of the minimum on these inputs.
func TestCrossCheckGNU(t *testing.T) {
	diff := gnuDiff()
	if diff == "" {
		t.Skip("GNU diff not installed: skipping the cross-check")
	}
	dir := t.TempDir()
	for _, c := range crossCases() {
		hs, err := Compute([]byte(c.a), []byte(c.b))
		if err != nil {
			t.Fatal(err)
		}
		checkHunks(t, c.a, c.b, hs)
		rr, ra := totals(hs)
		gr, ga := gnuTotals(t, diff, dir, c.a, c.b)
		mr, ma := gnuTotals(t, diff, dir, c.a, c.b, "--minimal")
		d := mr + ma
		lim := bound(strings.Count(c.a, "\n"), strings.Count(c.b, "\n"))
		t.Logf("%-24s ours -%d/+%d (%d hunks)  diff -%d/+%d  --minimal -%d/+%d  D=%d bound=%d",
			c.name, rr, ra, len(hs), gr, ga, mr, ma, d, lim)
		switch {
		case rr < mr || ra < ma:
			t.Errorf("%s: -%d/+%d is below the minimum -%d/+%d", c.name, rr, ra, mr, ma)
		case d <= lim && (rr != mr || ra != ma):
			t.Errorf("%s: D=%d within bound %d but -%d/+%d is not minimal (-%d/+%d)", c.name, d, lim, rr, ra, mr, ma)
		case d <= lim && gr == mr && ga == ma && (rr != gr || ra != ga):
			t.Errorf("%s: GNU diff is minimal (-%d/+%d), ours -%d/+%d", c.name, gr, ga, rr, ra)
		case d > lim && 50*(rr+ra) > 51*d:
			t.Errorf("%s: beyond the bound, -%d/+%d is more than 2%% above the minimum -%d/+%d", c.name, rr, ra, mr, ma)
		}
	}
}
