package bridge

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/tools"
)

// balanceTimeout bounds one balance request.
const balanceTimeout = 10 * time.Second

// balanceState is the account balance checks (Config.Balance): at most
// one under way, and the sessions already told the balance is low.
type balanceState struct {
	wg     sync.WaitGroup // the check under way, waited for by Close
	mu     sync.Mutex
	busy   bool
	warned map[string]bool // by session id
}

// checkBalance starts, at a turn's start, a background read of the
// account balance (Config.Balance) unless one is under way or s was
// already told: when every balance that has a threshold
// (Config.LowBalance, by currency) is below it, s gets one notice saying
// so, once per session. It never blocks the turn and never retries: a
// failed read is logged at debug and the next turn reads again. Close
// cancels and waits for it.
func (b *Bridge) checkBalance(s *liveSession) {
	if b.cfg.Balance == nil || len(b.cfg.LowBalance) == 0 {
		return
	}
	st := &b.balance
	st.mu.Lock()
	if st.busy || st.warned[s.id] {
		st.mu.Unlock()
		return
	}
	st.busy = true
	st.wg.Add(1)
	st.mu.Unlock()
	go func() {
		defer st.wg.Done()
		ctx, cancel := context.WithTimeout(b.ctx, balanceTimeout)
		defer cancel()
		bals, err := b.cfg.Balance(ctx)
		low := ""
		if err == nil {
			low = lowBalance(bals, b.cfg.LowBalance)
		}
		st.mu.Lock()
		st.busy = false
		tell := low != "" && !st.warned[s.id]
		if tell {
			if st.warned == nil {
				st.warned = map[string]bool{}
			}
			st.warned[s.id] = true
		}
		st.mu.Unlock()
		if tell {
			tools.Notify(s.agent.Tools, tools.Notice{Severity: tools.NoticeWarning, Title: "DeepSeek balance is low: " + low,
				Description: "The account has " + low + " left. Top it up at platform.deepseek.com: once it runs out, every model request fails (HTTP 402)."})
		}
		b.log.Debug("balance checked", "session", s.id, "low", low, "err", err)
	}()
}

// lowBalance is the balances below their thresholds, e.g. "0.52 USD"
// ("" unless every balance with a threshold is below it, and at least
// one has a threshold).
func lowBalance(bals []llm.Balance, below map[string]float64) string {
	var low []string
	for _, bl := range bals {
		th, ok := below[bl.Currency]
		if !ok {
			continue
		}
		if bl.Total >= th {
			return ""
		}
		low = append(low, fmt.Sprintf("%.2f %s", bl.Total, bl.Currency))
	}
	sort.Strings(low)
	return strings.Join(low, ", ")
}
