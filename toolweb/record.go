package toolweb

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// The kinds of a recorded web call (exchange.Kind).
const (
	kindSearch = "search" // a Search API call: Response is the API's body
	kindFetch  = "fetch"  // a Fetch API call: Response is the API's body
	kindPage   = "page"   // a direct fetch: Response is the page read
)

// exchange is one recorded web call, the file DIR/web-NNN.json (NNN
// counting the process's web calls from 001, in the order they are
// made): Kind, the request sent (the API's body, or {"url"} of a direct
// fetch) and either Response (the API's answer, or the page a direct
// fetch read) or Error (the failure's text; failures are recorded too,
// so a replay fails where the recorded run did).
type exchange struct {
	Kind     string          `json:"kind"`
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// tape records web calls into a directory (--record) or answers them
// from one (--replay). The zero value (no dir) does neither. Calls are
// numbered in the order they start; the tools run one at a time while a
// tape is in use, so the numbers follow the model's call order.
type tape struct {
	dir    string
	replay bool
	mu     sync.Mutex
	n      int
}

// active reports whether the tape records or replays.
func (t *tape) active() bool { return t != nil && t.dir != "" }

// next returns the number of the next call and advances.
func (t *tape) next() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	return t.n
}

func (t *tape) path(n int) string { return filepath.Join(t.dir, fmt.Sprintf("web-%03d.json", n)) }

// play returns the recorded answer of the next call, which must be of
// kind; a recorded failure comes back as an error with its text.
func (t *tape) play(kind string) (json.RawMessage, error) {
	p := t.path(t.next())
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("replay: no recorded web call %s: %w", filepath.Base(p), err)
	}
	var ex exchange
	if err := json.Unmarshal(b, &ex); err != nil {
		return nil, fmt.Errorf("replay: %s: %w", filepath.Base(p), err)
	}
	if ex.Kind != kind {
		return nil, fmt.Errorf("replay: %s records a %s call, but this call is a %s", filepath.Base(p), ex.Kind, kind)
	}
	if ex.Error != "" {
		return nil, errors.New(ex.Error)
	}
	return ex.Response, nil
}

// keep writes one call to the next file (recording); a failure to write
// is returned for the caller to log, the call's own answer stands.
func (t *tape) keep(kind string, request any, response json.RawMessage, callErr error) error {
	req, err := json.Marshal(request)
	if err != nil {
		return err
	}
	ex := exchange{Kind: kind, Request: req, Response: response}
	if callErr != nil {
		ex.Response, ex.Error = nil, callErr.Error()
	}
	b, err := json.MarshalIndent(ex, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(t.dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(t.path(t.next()), append(b, '\n'), 0o600)
}
