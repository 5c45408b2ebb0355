package agent

import (
	"maps"

	"github.com/dsh-acp/dsh-acp/tools"
)

// charge notes a billed tool call of the turn: its kind is counted for
// the usage events, its price waits in the session for the next one.
func (t *turnRun) charge(c tools.Charge) {
	if t.billed == nil {
		t.billed = map[string]int{}
	}
	t.billed[c.Kind]++
	t.s.mu.Lock()
	t.s.pending = append(t.s.pending, c)
	t.s.mu.Unlock()
}

// billedCalls is a copy of the turn's billed call counts, nil when there
// are none.
func (t *turnRun) billedCalls() map[string]int {
	if len(t.billed) == 0 {
		return nil
	}
	return maps.Clone(t.billed)
}

// addPending adds the pending charges' prices in currency to *amount and
// clears them (s.mu held). It reports false when a charge has no price
// in that currency: the session's cost is then no longer known.
func (s *Session) addPending(amount *float64, currency string) bool {
	ok := true
	for _, c := range s.pending {
		p, has := c.Price[currency]
		if !has {
			ok = false
		}
		*amount += p
	}
	s.pending = nil
	return ok
}
