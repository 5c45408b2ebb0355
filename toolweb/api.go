package toolweb

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Bounds of the Search and Fetch API requests.
const (
	// APITimeout bounds one API request (both attempts of a 429 retry
	// together are bounded by twice this plus MaxRetryAfter).
	APITimeout = 60 * time.Second
	// MaxRetryAfter bounds the wait before the one retry of a 429: a
	// longer Retry-After is waited this long.
	MaxRetryAfter = 10 * time.Second
	// defaultRetryAfter is the wait when a 429 names none.
	defaultRetryAfter = time.Second
	// maxAPIBody is the largest API response read (a fetched page is
	// Markdown text; 16 MiB is far above any page the model could use).
	maxAPIBody = 16 << 20
)

// searchRequest is the body of POST {origin}/v1/tools/search as
// DeepSeek's Search and Fetch guide documents it: query (1 to 128 Unicode
// characters, with operators such as site:, -site:, lang:, after:,
// before:) and count (1 to 50, default 10). The guide's other fields
// (ori_question, localization, need_content) are not sent.
type searchRequest struct {
	Query string `json:"query"`
	Count int    `json:"count,omitempty"`
}

// searchResponse is the documented part of the Search API's answer: a
// list of results, each with title, url, summary (typically 600 to 800
// characters), snippet (100 to 200) and rerank_score (0 to 3; the guide
// calls 1.5 and up high quality). Other fields of a result (an
// authority tier, dates) are not read; a result's publication date is
// not documented in the guide as read.
type searchResponse struct {
	Results []searchResult `json:"results"`
}

type searchResult struct {
	Title       string   `json:"title"`
	URL         string   `json:"url"`
	Summary     string   `json:"summary,omitempty"`
	Snippet     string   `json:"snippet,omitempty"`
	RerankScore *float64 `json:"rerank_score,omitempty"`
}

// fetchRequest is the body of POST {origin}/v1/tools/fetch: one http or
// https URL (the guide allows up to 8,192 characters).
type fetchRequest struct {
	URL string `json:"url"`
}

// fetchResponse is the Fetch API's answer: the page's title and its text
// as Markdown. The guide as read names the title; the name of the
// Markdown field was not confirmed, so both "content" and "markdown" are
// read (the first non-empty wins), and "url" when the answer names the
// URL it read.
type fetchResponse struct {
	URL      string `json:"url,omitempty"`
	Title    string `json:"title,omitempty"`
	Content  string `json:"content,omitempty"`
	Markdown string `json:"markdown,omitempty"`
}

// text is the page's Markdown.
func (r fetchResponse) text() string {
	if r.Content != "" {
		return r.Content
	}
	return r.Markdown
}

// api calls DeepSeek's Search and Fetch APIs (or compatible endpoints).
type api struct {
	// keyHost is the host (host[:port], lower case) of the model's base
	// URL: the key goes only to an endpoint on that very host.
	keyHost   string
	key       func() (string, error)
	client    *http.Client
	userAgent string
	now       func() time.Time
	// sleep waits d or until ctx is done.
	sleep func(ctx context.Context, d time.Duration) error
}

// apiError is a failed API request: Status is the HTTP status (0 when
// no answer came), Reason the server's message or the transport error.
type apiError struct {
	Endpoint string
	Status   int
	Reason   string
}

func (e *apiError) Error() string {
	if e.Status == 0 {
		return e.Endpoint + ": " + e.Reason
	}
	msg := fmt.Sprintf("%s answered HTTP %d", e.Endpoint, e.Status)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg += " (check the API key in DSH_API_KEY / DEEPSEEK_API_KEY)"
	case http.StatusTooManyRequests:
		msg += " (rate limited, also after one retry; try again later)"
	case http.StatusPaymentRequired:
		msg += " (the account's balance is used up)"
	}
	return msg
}

// post sends body as JSON to endpoint and returns the answer's bytes. The
// Authorization header is set only when endpoint's host is keyHost. A
// 429 is retried once after its Retry-After (at most MaxRetryAfter).
func (a *api) post(ctx context.Context, endpoint string, body any) ([]byte, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	auth := ""
	if strings.EqualFold(u.Host, a.keyHost) {
		key, err := a.key()
		if err != nil {
			return nil, err
		}
		auth = "Bearer " + key
	}
	for attempt := 0; ; attempt++ {
		b, status, wait, err := a.once(ctx, endpoint, payload, auth)
		if err == nil {
			return b, nil
		}
		if status != http.StatusTooManyRequests || attempt > 0 {
			return nil, err
		}
		if err := a.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// once makes one request; for a 429 it also returns the wait its
// Retry-After asks for.
func (a *api) once(ctx context.Context, endpoint string, payload []byte, auth string) ([]byte, int, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, APITimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if a.userAgent != "" {
		req.Header.Set("User-Agent", a.userAgent)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, 0, 0, &apiError{Endpoint: endpoint, Reason: err.Error()}
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBody))
	if err != nil {
		return nil, 0, 0, &apiError{Endpoint: endpoint, Reason: "reading the answer: " + err.Error()}
	}
	if resp.StatusCode/100 != 2 {
		wait := retryAfter(resp.Header.Get("Retry-After"), a.now(), defaultRetryAfter, MaxRetryAfter)
		return nil, resp.StatusCode, wait, &apiError{Endpoint: endpoint, Status: resp.StatusCode, Reason: errorReason(b)}
	}
	return b, resp.StatusCode, 0, nil
}

// errorReason is the message of an error answer: error.message of
// OpenAI-style JSON, message, or the first line of the text.
func errorReason(b []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &inner) == nil && inner.Message != "" {
			return inner.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return s
		}
		if e.Message != "" {
			return e.Message
		}
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "…"
	}
	return line
}

// sleepCtx waits d or until ctx is done (api.sleep's default).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
