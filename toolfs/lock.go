package toolfs

import (
	"context"
	"sync"
)

// locks holds one lock per real path being mutated, process-wide (two
// sessions editing one file are serialised too). Entries are removed when
// their last holder or waiter leaves.
var locks = struct {
	mu sync.Mutex
	m  map[string]*fileLock
}{m: map[string]*fileLock{}}

type fileLock struct {
	ch   chan struct{} // holds a token while the lock is held
	refs int           // holders and waiters
}

// lockFile takes the lock of target, waiting in arrival order. It returns
// the unlock function, or ctx's error when ctx ends first.
func lockFile(ctx context.Context, target string) (func(), error) {
	locks.mu.Lock()
	l := locks.m[target]
	if l == nil {
		l = &fileLock{ch: make(chan struct{}, 1)}
		locks.m[target] = l
	}
	l.refs++
	locks.mu.Unlock()
	release := func() {
		locks.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(locks.m, target)
		}
		locks.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-l.ch
			release()
		})
	}, nil
}
