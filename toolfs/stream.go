package toolfs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
)

// streamBuf is the read buffer of a streaming read, in bytes.
const streamBuf = 64 << 10

// streamResult is what a streaming read found.
type streamResult struct {
	body    string // the window's text (see windower.body)
	total   int    // lines (lines scanned when capped)
	sum     uint64 // hash of every byte read (sumOf of the whole file)
	problem string // "" for text, else why it is not (see textProblem)
}

// streamWindow reads r to its end and selects the window [offset,
// offset+limit) with bounded memory: lines before and after the window are
// only counted, and a selected line keeps at most keepBytes bytes. It stops
// early on a text problem (then body and total are unset). Errors: r's
// read errors, and ctx's error when ctx ends (checked per buffer).
func streamWindow(ctx context.Context, r io.Reader, offset, limit int) (streamResult, error) {
	h := newHasher()
	check := &textCheck{}
	br := bufio.NewReaderSize(io.TeeReader(r, io.MultiWriter(h, check)), streamBuf)
	w := &windower{offset: offset, limit: limit}
	var (
		line      []byte // the kept prefix of the line being read
		inLine    bool   // a line has started
		truncated bool   // bytes of the current line were dropped
		first     = true
		eof       bool
	)
	for !w.done() {
		if err := ctx.Err(); err != nil {
			return streamResult{}, err
		}
		chunk, err := br.ReadSlice('\n')
		if check.nul || check.bad {
			return streamResult{problem: check.problem()}, nil
		}
		if first {
			chunk = bytes.TrimPrefix(chunk, bom)
			first = false
		}
		if len(chunk) > 0 {
			inLine = true
		}
		ended := err == nil
		if ended {
			chunk = chunk[:len(chunk)-1]
		}
		if w.want() {
			if room := keepBytes - len(line); len(chunk) > room {
				chunk, truncated = chunk[:room], true
			}
			line = append(line, chunk...)
		}
		if ended || errors.Is(err, io.EOF) && inLine {
			if w.want() {
				if !w.add(line, !truncated) {
					break
				}
			} else {
				w.skip(1)
			}
			line, truncated, inLine = line[:0], false, false
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			eof = true
		default:
			return streamResult{}, err
		}
		if eof {
			break
		}
	}
	// The rest: count its lines (unless capped) and read it for the hash and
	// the text check.
	total := w.seen
	if !eof {
		n, err := restLines(ctx, br, check)
		switch {
		case err != nil:
			return streamResult{}, err
		case check.nul || check.bad:
			return streamResult{problem: check.problem()}, nil
		}
		if !w.capped {
			total += n
		}
	}
	if p := check.problem(); p != "" {
		return streamResult{problem: p}, nil
	}
	return streamResult{body: w.body(total), total: total, sum: h.Sum64()}, nil
}

// restLines reads br to its end (for the hash and the text check that
// tee from it) and counts its lines, a last one without a newline
// included; it stops early when check finds the file is not text (the
// count is then meaningless).
func restLines(ctx context.Context, br *bufio.Reader, check *textCheck) (int, error) {
	buf := make([]byte, streamBuf)
	n, last := 0, byte('\n')
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		k, err := br.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if check.nul || check.bad {
			return 0, nil
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}
