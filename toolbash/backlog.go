package toolbash

import (
	"os"
	"slices"
)

// liveMemory is how much not-yet-reported live output is kept in memory;
// more waits in an unlinked temporary file (so a fast command's 16 MiB
// live view does not cost 16 MiB of heap).
const liveMemory = 1 << 20

// backlog is a FIFO of bytes: first in memory blocks (at most memLimit
// bytes), then, when those are full, in an overflow file. The newest bytes
// are always behind the oldest: while the file holds bytes, new ones go
// there too. Not safe for concurrent use.
type backlog struct {
	block    int                      // the size of a memory block
	memLimit int                      // bytes kept in memory before using the file
	open     func() (*os.File, error) // creates the overflow file; nil for none

	blocks [][]byte // memory blocks, oldest first
	head   int      // bytes of blocks[0] already consumed
	mem    int      // bytes in memory not yet consumed
	free   [][]byte // a few spare blocks

	file         *os.File
	fileR, fileW int64 // read and write offsets in file
	fileFailed   bool  // the file could not be created or written
}

// pending returns the number of bytes not yet consumed.
func (q *backlog) pending() int {
	return q.mem + int(q.fileW-q.fileR)
}

// push appends p and returns how many bytes it kept (fewer only when the
// overflow file fails mid-write).
func (q *backlog) push(p []byte) int {
	if q.fileW > q.fileR || (q.mem+len(p) > q.memLimit && q.useFile()) {
		n, err := q.file.WriteAt(p, q.fileW)
		q.fileW += int64(n)
		if err != nil {
			q.fileFailed = true
		}
		return n
	}
	q.pushMem(p)
	return len(p)
}

// useFile reports whether the overflow file is there (creating it once).
func (q *backlog) useFile() bool {
	if q.file != nil {
		return !q.fileFailed
	}
	if q.open == nil || q.fileFailed {
		return false
	}
	f, err := q.open()
	if err != nil {
		q.fileFailed = true
		return false
	}
	q.file = f
	return true
}

func (q *backlog) pushMem(p []byte) {
	q.mem += len(p)
	for len(p) > 0 {
		if len(q.blocks) == 0 || len(q.blocks[len(q.blocks)-1]) == q.block {
			q.blocks = append(q.blocks, q.newBlock())
		}
		last := &q.blocks[len(q.blocks)-1]
		n := min(len(p), q.block-len(*last))
		*last = append(*last, p[:n]...)
		p = p[n:]
	}
}

func (q *backlog) newBlock() []byte {
	if n := len(q.free); n > 0 {
		b := q.free[n-1]
		q.free = q.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, q.block)
}

// peek appends up to n of the oldest bytes to dst, without consuming them.
func (q *backlog) peek(dst []byte, n int) []byte {
	want := len(dst) + n
	for i, off := 0, q.head; i < len(q.blocks) && len(dst) < want; i, off = i+1, 0 {
		b := q.blocks[i][off:]
		dst = append(dst, b[:min(len(b), want-len(dst))]...)
	}
	if k := min(want-len(dst), int(q.fileW-q.fileR)); k > 0 {
		start := len(dst)
		dst = slices.Grow(dst, k)[:start+k]
		m, _ := q.file.ReadAt(dst[start:], q.fileR)
		dst = dst[:start+m]
	}
	return dst
}

// consume drops the n oldest bytes (n <= pending()).
func (q *backlog) consume(n int) {
	for n > 0 && q.mem > 0 {
		b := q.blocks[0][q.head:]
		k := min(n, len(b))
		q.head += k
		q.mem -= k
		n -= k
		if q.head == len(q.blocks[0]) {
			if len(q.free) < 2 {
				q.free = append(q.free, q.blocks[0])
			}
			q.blocks[0] = nil
			q.blocks = q.blocks[1:]
			q.head = 0
		}
	}
	q.fileR += int64(n)
	if q.file != nil && q.fileR >= q.fileW {
		// Drained: start the file over (and give its pages back).
		q.fileR, q.fileW = 0, 0
		_ = q.file.Truncate(0)
	}
}

// close releases the overflow file.
func (q *backlog) close() {
	if q.file != nil {
		_ = q.file.Close()
		q.file = nil
		q.fileFailed = true
	}
	q.blocks, q.free, q.mem, q.head = nil, nil, 0, 0
}
