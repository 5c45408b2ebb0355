package agent

import (
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// NewChildSession returns a session for a child run (a subagent) over
// store, whose tools see ts. The store may already hold events (a fork
// child starts from its parent's conversation): they are the child's
// history, but their cost is the parent's (charges of its calls not yet
// in a usage event included), so the child's cumulative cost starts at
// zero (Spent is what the child itself cost).
func NewChildSession(store *session.Store, ts tools.Session) *Session {
	s := NewSession(store, ts)
	s.mu.Lock()
	s.prepare()
	s.cost, s.pending = costState{known: true}, nil
	s.mu.Unlock()
	return s
}

// Hide keeps the tools called names out of the requests of s (a child
// that may not start children of its own is not told about the subagent
// tools). A call the model makes anyway still reaches the tool.
func (s *Session) Hide(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hidden == nil {
		s.hidden = map[string]bool{}
	}
	for _, n := range names {
		s.hidden[n] = true
	}
}

// shown reports whether the tool called name is told to the model.
func (s *Session) shown(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.hidden[name]
}

// Spent returns the session's cumulative cost, nil when it is not known
// (a response that could not be priced).
func (s *Session) Spent() *session.Cost {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prepare()
	if !s.cost.known {
		return nil
	}
	return &session.Cost{Amount: s.cost.amount, Currency: s.cost.currency}
}

// AddSpent adds what a child cost (its Spent) to s's cumulative cost,
// which the next usage event of s reports; nil (not known), or another
// currency than s's, makes s's cost unknown from then on.
func (s *Session) AddSpent(c *session.Cost) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prepare()
	switch {
	case c == nil:
		s.cost = costState{}
	case c.Currency == "":
		// A child that priced nothing costs nothing.
	default:
		s.cost.add(c.Amount, c.Currency)
	}
}
