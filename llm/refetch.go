package llm

import "context"

// Refetch asks the lister again, on a goroutine the ModelList owns (its
// endpoint may have changed: Switch.Route), and calls then once the
// answer is in: a list replaces the old one, a failure keeps it (and is
// logged at warn). Close abandons it; then is not called for an
// abandoned request.
func (m *ModelList) Refetch(then func()) {
	if m == nil {
		return
	}
	m.Start()
	go func() {
		ctx, cancel := context.WithTimeout(m.ctx, m.timeout)
		defer cancel()
		models, err := m.lister.ListModels(ctx)
		if m.ctx.Err() != nil {
			return
		}
		m.mu.Lock()
		if err == nil {
			m.models, m.err = models, nil
		}
		m.mu.Unlock()
		if err != nil {
			m.log.Warn("could not list the models of the new endpoint; the model selector keeps the old list", "err", err)
		}
		then()
	}()
}
