//go:build !linux

package toolbash

// makeUndumpable does nothing outside Linux (there is no
// /proc/<pid>/environ to protect there); it always returns nil.
func makeUndumpable() error { return nil }
