// This file parses a call's arguments for the cards and the permission
// check asked without a resolved call (one hands over its own parse).

package toolmcp

import (
	"encoding/json"
	"errors"
	"sync/atomic"

	"github.com/dsh-acp/dsh-acp/tools"
)

// argParses counts the arguments texts toolmcp parsed itself, for a
// card or an Access asked without a resolved call (the tests count
// them).
var argParses atomic.Int64

// parseArgs is tools.ParseArgs(args), counted.
func parseArgs(args json.RawMessage) (any, error) {
	argParses.Add(1)
	return tools.ParseArgs(args)
}

// onlyDuplicates reports whether err is ParseArgs's refusal of JSON
// that gives a key twice (the text is JSON nonetheless).
func onlyDuplicates(err error) bool {
	var ae *tools.ArgsError
	return errors.As(err, &ae) && ae.Err == nil
}
