package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ModelInfo is what is known about one model of an endpoint.
type ModelInfo struct {
	// ID is the model name requests send (`model`).
	ID string
	// Name is a display name; "" means ID.
	Name string
	// ContextWindow is the model's context window in tokens; 0 when
	// unknown.
	ContextWindow int
}

// ModelLister lists the models an endpoint serves.
type ModelLister interface {
	// ListModels asks the endpoint once; errors are *Error values.
	ListModels(ctx context.Context) ([]ModelInfo, error)
}

var _ ModelLister = HTTP{}

// modelsBodyLimit bounds, in bytes, the `/models` answer read.
const modelsBodyLimit = 4 << 20

// ListModels implements ModelLister: `GET {BaseURL}/models` with the API
// key, one attempt, answered in the OpenAI list shape
// `{"data": [{"id", ...}, ...]}`. Entries keep the endpoint's order;
// those without an id, and repeated ids, are left out. A context window
// is read from the metadata some endpoints add to an entry:
// `context_length` (OpenRouter), `context_window` (Groq) or
// `max_model_len` (vLLM); `name` becomes the display name.
//
// Errors (*Error): NO_API_KEY without a request when APIKey is empty
// (or KeyFunc fails);
// the status codes of Stream for a non-2xx answer; CONNECTION when no
// answer came; MALFORMED_RESPONSE for a body that is not that shape,
// over 4 MiB, or lists no model; CANCELLED when ctx ends.
func (h HTTP) ListModels(ctx context.Context) ([]ModelInfo, error) {
	body, err := h.get(ctx, strings.TrimRight(h.baseURL(), "/")+"/models", "model list", modelsBodyLimit)
	if err != nil {
		return nil, err
	}
	return parseModels(body)
}

// get sends `GET url` with the key and returns the body of a 2xx answer,
// at most limit bytes (a larger body is MALFORMED_RESPONSE). what names
// the answer in errors ("model list"). Errors: NO_API_KEY, CONFIG for a
// bad URL, CONNECTION, HTTP_<status> (AUTH for 401/403), the context's.
func (h HTTP) get(ctx context.Context, url, what string, limit int) ([]byte, error) {
	h, err := h.withKey()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, &Error{Code: CodeConfig, Message: "invalid base URL: " + err.Error(), Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+h.APIKey)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", h.userAgent())
	resp, err := h.client().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, cancelled(ctx)
		}
		return nil, &Error{Code: CodeConnection, Err: err, Message: h.redact("cannot get the " + what + ": " + err.Error())}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, cancelled(ctx)
		}
		return nil, &Error{Code: CodeConnection, Err: err, Message: "reading the " + what + ": " + err.Error()}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := httpError(resp.StatusCode, body)
		e.Message = h.redact(e.Message)
		return nil, e
	}
	if len(body) > limit {
		return nil, &Error{Code: CodeMalformed, Message: fmt.Sprintf("the %s is larger than %d MiB", what, limit>>20)}
	}
	return body, nil
}

// parseModels reads an OpenAI-style model list.
func parseModels(body []byte) ([]ModelInfo, error) {
	var w struct {
		Data []struct {
			ID            string `json:"id"`
			Name          string `json:"name"`
			ContextLength *int   `json:"context_length"`
			ContextWindow *int   `json:"context_window"`
			MaxModelLen   *int   `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, &Error{Code: CodeMalformed, Err: err, Message: "the model list is not the expected JSON ({\"data\": [{\"id\": ...}]}): " + err.Error()}
	}
	seen := map[string]bool{}
	var out []ModelInfo
	for _, d := range w.Data {
		id := strings.TrimSpace(d.ID)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		m := ModelInfo{ID: id, Name: strings.TrimSpace(d.Name)}
		for _, n := range []*int{d.ContextLength, d.ContextWindow, d.MaxModelLen} {
			if n != nil && *n > 0 {
				m.ContextWindow = *n
				break
			}
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, &Error{Code: CodeMalformed, Message: "the model list names no model"}
	}
	return out, nil
}

// DefaultModelListTimeout bounds one `/models` request of a ModelList.
const DefaultModelListTimeout = 10 * time.Second

// ModelList is an endpoint's model list, fetched once per process: the
// first Start sends the request on a goroutine the ModelList owns; Wait,
// Models and Info read the answer; Close abandons a request still under
// way (it does not wait for it). A failed or junk answer is logged as one
// warning and the list stays empty for the rest of the process (the
// callers fall back to the models they know). The zero value is not
// usable; a nil *ModelList has no models and never answers.
type ModelList struct {
	lister  ModelLister
	log     *slog.Logger
	timeout time.Duration

	start  sync.Once
	done   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the requests' goroutines, waited for by Close

	mu     sync.Mutex
	models []ModelInfo
	err    error
	asked  uint64 // requests sent so far; only the latest one's answer is kept
}

// NewModelList returns the list of l's models, not fetched yet. timeout
// bounds the request (<= 0 means DefaultModelListTimeout); log (nil
// discards) gets the warning of a failed answer.
func NewModelList(l ModelLister, timeout time.Duration, log *slog.Logger) *ModelList {
	if timeout <= 0 {
		timeout = DefaultModelListTimeout
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &ModelList{lister: l, log: log, timeout: timeout, done: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// Start sends the request, once per ModelList; later calls do nothing.
func (m *ModelList) Start() {
	if m == nil {
		return
	}
	m.start.Do(func() { m.ask(false, nil) })
}

// ask sends one request on a goroutine m owns (Close waits for it).
// The first request (again false) stores its answer, a failure
// included, and closes Done; a later one (again) replaces the list only
// when it succeeds. Either stores nothing when a newer request was sent
// meanwhile, so an older answer never overwrites a newer one. then,
// when set, runs after the answer is in, unless m was closed.
func (m *ModelList) ask(again bool, then func()) {
	m.mu.Lock()
	m.asked++
	n := m.asked
	m.mu.Unlock()
	m.wg.Go(func() {
		if !again {
			defer close(m.done)
		}
		ctx, cancel := context.WithTimeout(m.ctx, m.timeout)
		defer cancel()
		models, err := m.lister.ListModels(ctx)
		m.mu.Lock()
		latest := n == m.asked
		if latest && (err == nil || !again) {
			m.models, m.err = models, err
		}
		m.mu.Unlock()
		if m.ctx.Err() != nil {
			return // abandoned by Close: nothing to report or announce
		}
		m.report(again, len(models), err)
		if then != nil {
			then()
		}
	})
}

// report logs how a request ended.
func (m *ModelList) report(again bool, listed int, err error) {
	switch {
	case err == nil:
		m.log.Debug("listed the endpoint's models", "models", listed)
	case again:
		m.log.Warn("could not list the models of the new endpoint; the model selector keeps the old list", "err", err)
	case isCode(err, CodeNoAPIKey):
		m.log.Info("no API key: the model selector lists the configured and known models only")
	default:
		m.log.Warn("could not list the endpoint's models; the model selector lists the configured and known models only", "err", err)
	}
}

func isCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Done is closed once the answer (or the failure) is in, or, for a list
// never started, by Close. A nil list's channel is never closed.
func (m *ModelList) Done() <-chan struct{} {
	if m == nil {
		return nil
	}
	return m.done
}

// Wait starts the request if needed and waits up to d (or until ctx
// ends) for its answer; ok reports a list arrived in that time.
func (m *ModelList) Wait(ctx context.Context, d time.Duration) (models []ModelInfo, ok bool) {
	if m == nil {
		return nil, false
	}
	m.Start()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-m.done:
	case <-t.C:
	case <-ctx.Done():
	}
	return m.Models()
}

// Models returns the listed models (a copy) and whether a list arrived.
func (m *ModelList) Models() ([]ModelInfo, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.models == nil {
		return nil, false
	}
	return append([]ModelInfo(nil), m.models...), true
}

// Err returns the failure of the request, nil while it runs or when it
// succeeded.
func (m *ModelList) Err() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Info returns what the list says about model id.
func (m *ModelList) Info(id string) (ModelInfo, bool) {
	if m == nil {
		return ModelInfo{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, mi := range m.models {
		if mi.ID == id {
			return mi, true
		}
	}
	return ModelInfo{}, false
}

// Close abandons the requests under way (their contexts end) and waits
// for their goroutines, which return as soon as the lister does; no
// callback runs after it. Safe to call more than once.
func (m *ModelList) Close() {
	if m == nil {
		return
	}
	m.cancel()
	// A list never started is done now, without a request.
	m.start.Do(func() { close(m.done) })
	m.wg.Wait()
}
