//go:build !race

package llm

// raceEnabled: see race_on_test.go.
const raceEnabled = false
