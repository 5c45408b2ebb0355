package llm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Replay is the offline client: the Nth Stream call on one Replay value is
// answered with the bytes of Dir/NNN.sse (001.sse, 002.sse, ...), parsed by
// ParseStream exactly like a live body. The request itself is ignored. Use it
// through a pointer; it is safe for concurrent use (each call takes the next
// number).
type Replay struct {
	Dir string // folder holding 001.sse, 002.sse, ...

	mu   sync.Mutex
	next int // number of Stream calls so far
}

// NewReplay returns a Replay reading from dir.
func NewReplay(dir string) *Replay { return &Replay{Dir: dir} }

// Requests returns how many Stream calls the Replay has answered or refused.
func (r *Replay) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

// Stream answers the next request from its file (see Client). Errors
// (*Error): REPLAY_EXHAUSTED when the file does not exist, naming it;
// REPLAY_READ when it cannot be read; EMPTY_RESPONSE for an empty file; the
// ParseStream errors; CANCELLED when ctx ends.
func (r *Replay) Stream(ctx context.Context, _ Request, onDelta func(Delta)) (*Response, error) {
	r.mu.Lock()
	r.next++
	n := r.next
	r.mu.Unlock()
	if ctx.Err() != nil {
		return nil, cancelled(ctx)
	}
	path := filepath.Join(r.Dir, fmt.Sprintf("%03d.sse", n))
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &Error{Code: CodeReplayExhausted, Err: err, Message: fmt.Sprintf(
			"replay has no recorded answer for model request %d: %s does not exist", n, path)}
	}
	if err != nil {
		return nil, &Error{Code: CodeReplayRead, Err: err,
			Message: fmt.Sprintf("replay cannot open %s: %v", path, err)}
	}
	defer f.Close()
	res, err := parseBody(ctx, ctxReader{ctx: ctx, r: f}, onDelta)
	var e *Error
	if errors.As(err, &e) && e.Err != nil && e.Code == CodeStreamClosed {
		e.Code = CodeReplayRead
		e.Message = fmt.Sprintf("replay cannot read %s: %v", path, e.Err)
	}
	return res, err
}
