// This file parses a call's arguments once for the cards and the
// permission check.

package toolmcp

import (
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Bounds of argsMemo: argsEntries arguments texts of at most
// argsMaxKey bytes each (larger ones are parsed every time).
const (
	argsEntries = 4
	argsMaxKey  = 256 << 10
)

// argsMemo keeps the parse (tools.ParseArgs) of a tool's last arguments
// texts, keyed by the exact bytes and replaced oldest first, so that one
// call's cards (the pending card, the permission prompt) and its Access
// (the permission check, the checkpoint) parse its arguments once. The
// values are shared: their readers never change them. Safe for
// concurrent use; the zero value is empty.
type argsMemo struct {
	mu      sync.Mutex
	entries [argsEntries]parsedArgs
	next    int
}

// parsedArgs is one arguments text's parse: v the value (numbers as
// json.Number), err ParseArgs's error.
type parsedArgs struct {
	key  string
	used bool
	v    any
	err  error
}

// argParses counts the arguments texts argsMemo parsed (the tests
// count them).
var argParses atomic.Int64

// parse returns ParseArgs(args), from the memo when it holds args.
func (m *argsMemo) parse(args json.RawMessage) (any, error) {
	if len(args) > argsMaxKey {
		argParses.Add(1)
		return tools.ParseArgs(args)
	}
	m.mu.Lock()
	for _, e := range m.entries {
		if e.used && e.key == string(args) {
			m.mu.Unlock()
			return e.v, e.err
		}
	}
	m.mu.Unlock()
	argParses.Add(1)
	v, err := tools.ParseArgs(args)
	m.mu.Lock()
	m.entries[m.next] = parsedArgs{key: string(args), used: true, v: v, err: err}
	m.next = (m.next + 1) % argsEntries
	m.mu.Unlock()
	return v, err
}

// onlyDuplicates reports whether err is ParseArgs's refusal of JSON
// that gives a key twice (the text is JSON nonetheless).
func onlyDuplicates(err error) bool {
	var ae *tools.ArgsError
	return errors.As(err, &ae) && ae.Err == nil
}
