package hunks

import "math"

// maxWork caps the total work of one diff (diagonals visited plus line
// comparisons on snakes). It is a deterministic stand-in for a wall-clock
// safety net: about 1 s on this project's 2-core machines (~6.5 ns a unit),
// less on a laptop. Past it the
// remaining sub-problems are marked as plain replacements, which is correct
// but not minimal. Inputs with D within the bound reach it only when they are
// both huge and highly repetitive.
const maxWork = 150_000_000

// noPath is the backward sentinel: larger than any x.
const noPath = math.MaxInt / 2

// myers finds a shortest edit script between two id sequences with the
// linear-space variant of Myers' algorithm: find the middle snake of the
// box, then solve the two halves. Lines it removes from a or adds from b are
// marked in ca and cb.
type myers struct {
	a, b   []int32
	ca, cb []bool
	// fd[k+off] is the furthest x reached on diagonal k (= x-y) going
	// forward; bd[k+off] the smallest x reached going backward.
	fd, bd []int
	off    int
	// limit is the number of search steps per direction after which a box is
	// split at its furthest point instead of its middle snake. A box whose
	// shortest script has D <= 2*limit-1 edits never reaches it.
	limit int
	work  int
}

func newMyers(a, b []int32, bound int) *myers {
	// Diagonals run from -len(b) to len(a), plus two sentinels each side.
	n := len(a) + len(b) + 5
	return &myers{
		a: a, b: b,
		ca: make([]bool, len(a)), cb: make([]bool, len(b)),
		fd: make([]int, n), bd: make([]int, n),
		off:   len(b) + 2,
		limit: bound/2 + 1,
	}
}

// compare marks the edits turning a[x0:x1] into b[y0:y1].
func (m *myers) compare(x0, x1, y0, y1 int) {
	for {
		for x0 < x1 && y0 < y1 && m.a[x0] == m.b[y0] {
			x0, y0 = x0+1, y0+1
		}
		for x0 < x1 && y0 < y1 && m.a[x1-1] == m.b[y1-1] {
			x1, y1 = x1-1, y1-1
		}
		if x0 == x1 || y0 == y1 || m.work > maxWork {
			mark(m.ca[x0:x1])
			mark(m.cb[y0:y1])
			return
		}
		xm, ym, ok := m.bisect(x0, x1, y0, y1)
		if !ok {
			mark(m.ca[x0:x1])
			mark(m.cb[y0:y1])
			return
		}
		m.compare(x0, xm, y0, ym)
		x0, y0 = xm, ym
	}
}

func mark(c []bool) {
	for i := range c {
		c[i] = true
	}
}

// bisect returns a point (xm, ym) strictly inside the box through which a
// shortest script passes (the end of the middle snake). When the search
// exceeds m.limit steps or the work cap it returns the furthest point either
// search reached instead, so both halves are smaller and the script stays
// valid. ok is false only if no such point exists (never for a non-empty
// box whose corners differ).
//
// Both searches stay inside the box: a diagonal is entered only by a move
// that lands inside it, and the range of live diagonals shrinks from a side
// whose outermost path is stuck against the box's edge.
func (m *myers) bisect(x0, x1, y0, y1 int) (xm, ym int, ok bool) {
	a, b, fd, bd, off := m.a, m.b, m.fd, m.bd, m.off
	kmin, kmax := x0-y1, x1-y0
	fmid, bmid := x0-y0, x1-y1
	odd := (fmid-bmid)&1 != 0
	fd[off+fmid] = x0 // the corners differ: no snake at step 0
	bd[off+bmid] = x1
	fLo, fHi, bLo, bHi := fmid, fmid, bmid, bmid
	for c := 1; ; c++ {
		// Forward step c: diagonal k is entered from k+1 by a down move
		// (x, y+1) or from k-1 by a right move (x+1, y).
		pLo, pHi := fLo, fHi
		if pLo > kmin && fd[off+pLo]-pLo < y1 {
			fLo = pLo - 1
		} else {
			fLo = pLo + 1
		}
		if pHi < kmax && fd[off+pHi] < x1 {
			fHi = pHi + 1
		} else {
			fHi = pHi - 1
		}
		// Out-of-range neighbours read as sentinels that no move can use.
		fd[off+pLo-2], fd[off+pHi+2] = -2, -2
		m.work += forward(a[:x1], b[:y1], fd, off, fLo, fHi)
		if odd {
			// Overlap with the backward paths of step c-1: the middle snake
			// ends at the forward point.
			for k := max(fLo, bLo); k <= min(fHi, bHi); k++ {
				if x := fd[off+k]; (k-fLo)&1 == 0 && bd[off+k] <= x {
					return x, x - k, true
				}
			}
		}
		// Backward step c: diagonal k is entered from k+1 by a left move
		// (x-1, y) or from k-1 by an up move (x, y-1).
		pLo, pHi = bLo, bHi
		if pLo > kmin && bd[off+pLo] > x0 {
			bLo = pLo - 1
		} else {
			bLo = pLo + 1
		}
		if pHi < kmax && bd[off+pHi]-pHi > y0 {
			bHi = pHi + 1
		} else {
			bHi = pHi - 1
		}
		bd[off+pLo-2], bd[off+pHi+2] = noPath, noPath
		m.work += backward(a, b, bd, off, bLo, bHi, x0, y0)
		if !odd {
			// Overlap with the forward paths of step c: the middle snake
			// starts at the backward point.
			for k := max(fLo, bLo); k <= min(fHi, bHi); k++ {
				if x := bd[off+k]; (k-bLo)&1 == 0 && x <= fd[off+k] {
					return x, x - k, true
				}
			}
		}
		if c >= m.limit || m.work > maxWork {
			return m.furthest(x0, x1, y0, y1, fLo, fHi, bLo, bHi)
		}
	}
}

// forward extends the forward paths to diagonals hi, hi-2, …, lo and
// returns the work done. a and b end at the box's far corner; fd[off+k] is
// diagonal k, and fd[off+lo-1] and fd[off+hi+1] must be from the previous
// step or sentinels (-2).
func forward(a, b []int32, fd []int, off, lo, hi int) (work int) {
	x1, y1 := len(a), len(b)
	for k := hi; k >= lo; k -= 2 {
		down := fd[off+k+1] // a down move keeps x; invalid past the bottom
		if down-k > y1 {
			down = -1
		}
		right := fd[off+k-1] + 1 // a right move; invalid past the right edge
		if right > x1 {
			right = -1
		}
		x := max(down, right)
		s := x
		for y := x - k; x < len(a) && y < len(b) && a[x] == b[y]; y++ {
			x++
		}
		work += x - s + 1
		fd[off+k] = x
	}
	return work
}

// backward is forward for the backward paths, which start at the box's far
// corner and move toward (x0, y0); its sentinels are noPath.
func backward(a, b []int32, bd []int, off, lo, hi, x0, y0 int) (work int) {
	for k := hi; k >= lo; k -= 2 {
		left := bd[off+k+1] - 1 // a left move keeps y; invalid past the left edge
		if left < x0 {
			left = noPath
		}
		up := bd[off+k-1] // an up move keeps x; invalid past the top
		if up-k < y0 {
			up = noPath
		}
		x := min(left, up)
		s := x
		for y := x - k; x > x0 && y > y0 && a[x-1] == b[y-1]; y-- {
			x--
		}
		work += s - x + 1
		bd[off+k] = x
	}
	return work
}

// furthest returns the point that made the most progress: the forward point
// with the largest x+y or the backward point with the smallest x+y, whichever
// is further from its own corner. It must differ from both corners.
func (m *myers) furthest(x0, x1, y0, y1, fLo, fHi, bLo, bHi int) (xm, ym int, ok bool) {
	fBest, fx := -1, 0
	for k := fLo; k <= fHi; k += 2 {
		x := m.fd[m.off+k]
		if s := 2*x - k; s > fBest {
			fBest, fx = s, x
		}
	}
	bBest, bx := x1+y1+1, 0
	for k := bLo; k <= bHi; k += 2 {
		x := m.bd[m.off+k]
		if s := 2*x - k; s < bBest {
			bBest, bx = s, x
		}
	}
	if fBest < 0 && bBest > x1+y1 {
		return 0, 0, false
	}
	if fBest-(x0+y0) >= (x1+y1)-bBest {
		xm, ym = fx, fBest-fx
	} else {
		xm, ym = bx, bBest-bx
	}
	if (xm == x0 && ym == y0) || (xm == x1 && ym == y1) {
		return 0, 0, false
	}
	return xm, ym, true
}
