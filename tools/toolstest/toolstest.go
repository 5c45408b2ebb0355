// Package toolstest checks that a tools.Tool keeps the contract every
// registered tool must keep, in the spirit of testing/slogtest: a tool
// package calls Run from its own tests.
//
// The checks are:
//   - definition: a name the model API accepts (^[A-Za-z0-9_-]{1,64}$), a
//     description, an Execute; for a Define tool, a valid Spec whose schema
//     is the tool's Parameters;
//   - schema: Parameters is a JSON object with "type":"object" that
//     registers (it compiles as JSON Schema), and the model-facing Schema
//     holds only name, description, parameters and strict;
//   - invalid-arguments: arguments that cannot be valid (not JSON, not an
//     object, a missing required property, a property of the wrong type) give
//     an error result "Error: invalid arguments: …" with
//     {ToolArgsError, INVALID_ARGS} and no Meta, never a panic; these calls
//     are refused before the tool's own code runs, so they have no effect;
//   - presenters: PresentCall, PresentStart (fed the members of prefixes
//     of those arguments, as a stream gives them) and PresentResult, fed
//     generated, mutated and malformed arguments and results, never panic, give the same answer
//     twice, do not modify their inputs, and return only the closed set of
//     views with sane fields (a valid Kind, lines >= 0, diff paths set,
//     ExitCode and Signal not both set, RawInput valid JSON);
//   - preview: Preview, when set, fed arguments that are not an object,
//     neither panics nor returns a view without an error.
//
// Execute is never called with arguments that could be valid.
package toolstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Config tunes the checks. The zero value works.
type Config struct {
	// Samples are argument texts the tool accepts, now or in an older
	// version; the presenters see them and mutations of them.
	Samples []json.RawMessage
	// Results are extra inputs for PresentResult (typical contents and
	// Meta of this tool), tried with every sample.
	Results []tools.ResultInput
	// Rounds is the number of generated argument texts and of generated
	// (arguments, result) pairs; default 300.
	Rounds int
	// Seed seeds the generator (default 1), so a failure reproduces.
	Seed uint64
}

// check is one named group of checks; it returns every failure found.
type check struct {
	name string
	run  func(tool tools.Tool, cfg Config) []error
}

var checks = []check{
	{"definition", checkDefinition},
	{"schema", checkSchema},
	{"invalid-arguments", checkInvalidArgs},
	{"presenters", checkPresenters},
	{"preview", checkPreview},
}

// Check runs every check on tool and returns the failures joined with
// errors.Join (each prefixed by its check's name), or nil when tool passes.
func Check(tool tools.Tool, cfg Config) error {
	var errs []error
	for _, c := range checks {
		for _, err := range c.run(tool, cfg.withDefaults()) {
			errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
		}
	}
	return errors.Join(errs...)
}

// Run runs every check on tool as a subtest of t, one per check group,
// reporting each failure with t.Error.
func Run(t *testing.T, tool tools.Tool, cfg Config) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			for _, err := range c.run(tool, cfg.withDefaults()) {
				t.Error(err)
			}
		})
	}
}

func (c Config) withDefaults() Config {
	if c.Rounds <= 0 {
		c.Rounds = 300
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}
