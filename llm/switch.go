package llm

import (
	"context"
	"sync"
)

// Switch is the HTTP client whose endpoint can be changed while the
// agent runs (the providers/set method): each Stream and ListModels call
// uses the endpoint set last, a call under way keeps the one it started
// with. It is safe for concurrent use.
type Switch struct {
	mu   sync.Mutex
	main HTTP // the configured endpoint
	cur  HTTP
}

var (
	_ Client      = (*Switch)(nil)
	_ ModelLister = (*Switch)(nil)
)

// NewSwitch returns a Switch at the configured endpoint main.
func NewSwitch(main HTTP) *Switch { return &Switch{main: main, cur: main} }

// Route points later calls at baseURL (the endpoint root, as
// HTTP.BaseURL). A key that is not "" is sent instead of the configured
// key sources; "" keeps them (main's APIKey / KeyFunc).
func (s *Switch) Route(baseURL, key string) {
	h := s.main
	h.BaseURL = baseURL
	if key != "" {
		h.APIKey, h.KeyFunc = key, nil
	}
	s.mu.Lock()
	s.cur = h
	s.mu.Unlock()
}

func (s *Switch) now() HTTP {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Stream implements Client at the current endpoint.
func (s *Switch) Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	return s.now().Stream(ctx, req, onDelta)
}

// ListModels implements ModelLister at the current endpoint.
func (s *Switch) ListModels(ctx context.Context) ([]ModelInfo, error) {
	return s.now().ListModels(ctx)
}

// Balance reads the account balance at the current endpoint (see
// HTTP.Balance).
func (s *Switch) Balance(ctx context.Context) ([]Balance, error) {
	return s.now().Balance(ctx)
}
