package hunks

import (
	"strconv"
	"testing"

	"github.com/dsh-acp/dsh-acp/hunks/internal/benchcases"
)

// BenchmarkCompute measures Compute on the five cases of benchcases
// (scripts/bench-diff.sh measures the whole `dsh-acp diff` process against
// GNU diff on the same inputs). It reports the changed-line total as
// "lines/op".
func BenchmarkCompute(b *testing.B) {
	for _, c := range benchcases.All() {
		b.Run(c.Name, func(b *testing.B) {
			b.SetBytes(int64(len(c.Before) + len(c.After)))
			var n int
			for b.Loop() {
				hs, err := Compute(c.Before, c.After)
				if err != nil {
					b.Fatal(err)
				}
				r, a := totals(hs)
				n = r + a
			}
			b.ReportMetric(float64(n), "lines/op")
		})
	}
}

// BenchmarkMyers measures the search alone on the rewrite case, after
// interning and setting aside the lines found on one side only.
func BenchmarkMyers(b *testing.B) {
	c, _ := benchcases.Get("20k-rewrite")
	w := newWindow(c.Before, c.After)
	ia, ib, n := internAll(c.Before, w.mid(&w.a), c.After, w.mid(&w.b))
	ra, _ := keepShared(ia, ib, n, make([]bool, len(ia)))
	rb, _ := keepShared(ib, ia, n, make([]bool, len(ib)))
	for _, lim := range []int{2000, 8192} {
		b.Run(strconv.Itoa(lim), func(b *testing.B) {
			var work int
			for b.Loop() {
				m := newMyers(ra, rb, lim)
				m.compare(0, len(ra), 0, len(rb))
				work = m.work
			}
			b.ReportMetric(float64(work), "work/op")
		})
	}
}
