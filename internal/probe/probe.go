// Package probe counts the work one tool call costs along the chain
// (tool lookups, full argument decodes, file reads and diffs), for the
// tests that pin those counts. Nothing is counted unless a test started
// counting (Start): the production cost is one atomic load per event.
package probe

import "sync/atomic"

// Counts are the events counted since Start.
type Counts struct {
	// Lookups are tool lookups by name (a registry's Get, Lookup or the
	// resolution of a call).
	Lookups atomic.Int64
	// Decodes are full decodes of a call's arguments (parse, validation
	// and decoding into the tool's argument type).
	Decodes atomic.Int64
	// Reads are reads of a file's content by an edit (its preview or
	// its execution).
	Reads atomic.Int64
	// Diffs are the hunks of an edit computed.
	Diffs atomic.Int64
}

var active atomic.Pointer[Counts]

// Start begins counting into a fresh Counts; stop ends it. Counting is
// process-wide: tests that use it must not run in parallel with each
// other.
func Start() (c *Counts, stop func()) {
	c = new(Counts)
	active.Store(c)
	return c, func() { active.CompareAndSwap(c, nil) }
}

// Lookup counts a tool lookup.
func Lookup() {
	if c := active.Load(); c != nil {
		c.Lookups.Add(1)
	}
}

// Decode counts a full argument decode.
func Decode() {
	if c := active.Load(); c != nil {
		c.Decodes.Add(1)
	}
}

// Read counts a file read by an edit.
func Read() {
	if c := active.Load(); c != nil {
		c.Reads.Add(1)
	}
}

// Diff counts an edit's hunks computed.
func Diff() {
	if c := active.Load(); c != nil {
		c.Diffs.Add(1)
	}
}
