package tools

import "sync"

// carried are the Session.Value keys that hold conversation state (what
// the model has seen, e.g. the file versions toolfs observed), with the
// function that copies such a value for a fork.
var carried struct {
	mu    sync.Mutex
	clone map[any]func(any) any
}

// Carry declares the value a tool package keeps under key (through
// Session.Value) as conversation state: a session that takes over a
// conversation in this process gets it. A session that replaces another
// (Inherit: the editor reattaching with session/load or session/resume)
// shares the very value; a fork (Fork: session/fork) gets clone(value),
// so that the two conversations go on independently. Call it from an
// init function; a second call for key replaces the first.
func Carry(key any, clone func(any) any) {
	carried.mu.Lock()
	defer carried.mu.Unlock()
	if carried.clone == nil {
		carried.clone = map[any]func(any) any{}
	}
	carried.clone[key] = clone
}

// eachCarried calls f for every carried key.
func eachCarried(f func(key any, clone func(any) any)) {
	carried.mu.Lock()
	keys := make(map[any]func(any) any, len(carried.clone))
	for k, c := range carried.clone {
		keys[k] = c
	}
	carried.mu.Unlock()
	for k, c := range keys {
		f(k, c)
	}
}

// Fork gives dst, a new session whose conversation starts as a copy of
// src's, a clone of src's carried values (see Carry); nothing else of src
// (its background commands, notices, editor) comes along. Call it before
// any tool runs in dst.
func Fork(dst, src Session) {
	if dst == nil || src == nil || dst == src {
		return
	}
	eachCarried(func(key any, clone func(any) any) {
		if v := src.Value(key, nil); v != nil {
			dst.Value(key, func() any { return clone(v) })
		}
	})
}
