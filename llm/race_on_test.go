//go:build race

package llm

// raceEnabled: the race detector's instrumentation allocates beside the
// code under test, so allocation counts are not the code's own.
const raceEnabled = true
