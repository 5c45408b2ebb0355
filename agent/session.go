// This file holds a session's state as the agent keeps it between turns:
// the settings (model, thinking, the editor's system prompt), the turn
// counter, the tool call ids used, and the running cost.

package agent

import (
	"crypto/rand"
	"encoding/hex"
	"math"
	"sync"
	"time"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Session is one conversation: its events and the tool state. One turn
// runs at a time per session (the caller ensures it).
type Session struct {
	Store *session.Store
	Tools tools.Session
	// Checkpoints, when set, records the project before a turn's first
	// change and reports the turn's changes at its end.
	Checkpoints Checkpointer

	mu       sync.Mutex
	ready    bool // turn, usedIDs and cost were read from the store
	turn     int
	usedIDs  map[string]bool
	settings Settings
	cost     costState
	// cachePrompt and cacheHit are the session's prompt tokens and cache
	// hits so far (session.CacheTokens), continued from the store's last
	// usage event.
	cachePrompt, cacheHit int64
	// hidden are the tools the model is not told about (Hide).
	hidden map[string]bool
	// pending are the charges of tool calls (tools.Charge) not yet added
	// to cost: the next usage event adds them.
	pending []tools.Charge
	// history is the conversation as the last request carried it; the
	// next folds in the events logged since.
	history sessionHistory
}

// costState is a session's cumulative cost: known while every response
// so far was priced in one currency (amount then sums them; currency is
// "" before the first priced one).
type costState struct {
	known    bool
	amount   float64
	currency string
}

// NewSession returns a session over store whose tools see ts. The
// store's events (the last turn number, the tool call ids used, the
// cumulative cost) are read at the first turn, so a store whose log is
// decoded lazily (a resumed session) is not decoded here.
func NewSession(store *session.Store, ts tools.Session) *Session {
	return &Session{Store: store, Tools: ts, usedIDs: map[string]bool{}}
}

// prepare reads the store's events once (s.mu held). The cumulative
// cost continues from the store's last usage event: it stays known only
// when every response with usage in the store was followed by its usage
// event and that event carried a cost (or there was none yet).
func (s *Session) prepare() {
	if s.ready {
		return
	}
	s.ready = true
	s.cost = costState{known: true}
	unaccounted := false
	for _, ev := range s.Store.Events() {
		switch d := ev.Data.(type) {
		case session.TurnStart:
			s.turn = max(s.turn, d.Turn)
		case session.ToolCall:
			s.usedIDs[d.CallID] = true
		case session.AssistantMessage:
			if d.Usage != nil {
				if unaccounted {
					s.cost.known = false
				}
				unaccounted = true
			}
		case session.ToolResult:
			if d.Charge != nil {
				s.pending = append(s.pending, *d.Charge)
			}
		case session.ContextUsage:
			unaccounted = false
			if d.Cache != nil {
				s.cachePrompt, s.cacheHit = d.Cache.SessionPrompt, d.Cache.SessionHit
			}
			s.pending = nil
			if d.Cost == nil {
				s.cost = costState{}
			} else if s.cost.known {
				s.cost.amount, s.cost.currency = d.Cost.Amount, d.Cost.Currency
			}
		default:
			// Only the turn count, the call ids and the cost carry over.
		}
	}
	if unaccounted {
		s.cost.known = false
	}
}

// SetSettings replaces the session's settings; the next model request
// uses them.
func (s *Session) SetSettings(st Settings) {
	s.mu.Lock()
	s.settings = st
	s.mu.Unlock()
}

// Settings returns the session's settings.
func (s *Session) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// model is the model s's requests go to: its setting, else def (the
// agent's Config.Model).
func (s *Session) model(def string) string {
	if m := s.Settings().Model; m != "" {
		return m
	}
	return def
}

// addCost adds a response's cost to the session's cumulative cost and
// returns the total, nil once any response could not be priced (its
// model has no known price, or another currency than the earlier ones).
func (s *Session) addCost(m *llm.Meter, model string, u llm.Usage, at time.Time) *session.Cost {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := m.Price(model)
	amount := 0.0
	if ok {
		amount = p.Cost(u, at)
		ok = s.addPending(&amount, p.Currency)
	}
	if !ok || !s.cost.add(amount, p.Currency) {
		s.cost, s.pending = costState{}, nil
		return nil
	}
	return &session.Cost{Amount: s.cost.amount, Currency: s.cost.currency}
}

// add adds amount in currency to the cost; false (and the cost unknown
// from then on) when it was not known or is in another currency. Sums are
// rounded to 1e-10 (a ten-billionth of the currency unit) so that they
// read as the prices do, not as binary fractions.
func (c *costState) add(amount float64, currency string) bool {
	if !c.known || c.currency != "" && currency != c.currency {
		*c = costState{}
		return false
	}
	c.amount = math.Round((c.amount+amount)*1e10) / 1e10
	c.currency = currency
	return true
}

// claimID returns the model's id when it is non-empty and unused in the
// session, else a fresh "call_<random>" id, and marks it used.
func (s *Session) claimID(modelID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prepare()
	id := modelID
	for id == "" || s.usedIDs[id] {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = "call_" + hex.EncodeToString(b[:])
	}
	s.usedIDs[id] = true
	return id
}
