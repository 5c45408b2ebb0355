package llm

// Refetch asks the lister again (its endpoint may have changed:
// Switch.Route), on a goroutine the ModelList owns, and calls then once
// the answer is in: a list replaces the old one, a failure keeps it (and
// is logged at warn). An answer overtaken by a later Refetch is dropped,
// so the list is always the newest endpoint's. A ModelList never started
// sends its first request here (one request, not two), closing Done
// when it answers. Close abandons the request; then is not called for
// an abandoned one.
func (m *ModelList) Refetch(then func()) {
	if m == nil {
		return
	}
	first := false
	m.start.Do(func() { first = true })
	m.ask(!first, then)
}
