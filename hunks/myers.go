package hunks

// maxWork caps the total work of one diff (diagonals visited plus line
// comparisons on snakes). It is a deterministic stand-in for a wall-clock
// safety net: about half a second on a 2024 laptop core. Past it the
// remaining sub-problems are marked as plain replacements, which is correct
// but not minimal. Inputs with D within the bound reach it only when they are
// both huge and highly repetitive.
const maxWork = 400_000_000

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
	n := len(a) + len(b) + 3
	return &myers{
		a: a, b: b,
		ca: make([]bool, len(a)), cb: make([]bool, len(b)),
		fd: make([]int, n), bd: make([]int, n),
		off:   len(b) + 1,
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
		work := 0
		for k := fHi; k >= fLo; k -= 2 {
			x := -1
			if k+1 <= pHi {
				if v := fd[off+k+1]; v-k <= y1 {
					x = v
				}
			}
			if k-1 >= pLo {
				if v := fd[off+k-1] + 1; v <= x1 && v > x {
					x = v
				}
			}
			y := x - k
			s := x
			for x < x1 && y < y1 && a[x] == b[y] {
				x, y = x+1, y+1
			}
			work += x - s + 1
			fd[off+k] = x
			if odd && bLo <= k && k <= bHi && bd[off+k] <= x {
				m.work += work
				return x, y, true
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
		for k := bHi; k >= bLo; k -= 2 {
			x := x1 + 1
			if k+1 <= pHi {
				if v := bd[off+k+1] - 1; v >= x0 {
					x = v
				}
			}
			if k-1 >= pLo {
				if v := bd[off+k-1]; v-k >= y0 && v < x {
					x = v
				}
			}
			y := x - k
			s := x
			for x > x0 && y > y0 && a[x-1] == b[y-1] {
				x, y = x-1, y-1
			}
			work += s - x + 1
			bd[off+k] = x
			if !odd && fLo <= k && k <= fHi && x <= fd[off+k] {
				m.work += work
				return x, y, true
			}
		}
		m.work += work
		if c >= m.limit || m.work > maxWork {
			return m.furthest(x0, x1, y0, y1, fLo, fHi, bLo, bHi)
		}
	}
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
