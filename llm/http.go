package llm

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Defaults used when the matching HTTP field is zero.
const (
	DefaultBaseURL       = "https://api.deepseek.com"
	DefaultUserAgent     = "dsh-acp/dev"
	DefaultMaxAttempts   = 3
	DefaultMaxRetryAfter = 30 * time.Second
)

// errorBodyLimit bounds, in bytes, how much of a failed response is read.
const errorBodyLimit = 64 << 10

// defaultHTTPClient has no total timeout: streams are long and bounded by ctx.
var defaultHTTPClient = &http.Client{}

// HTTP is the live client: it POSTs to {BaseURL}/chat/completions and
// parses the event stream with ParseStream. The zero value of every field is
// usable except APIKey. It is safe for concurrent use.
type HTTP struct {
	BaseURL   string // endpoint root without /chat/completions; "" means DefaultBaseURL
	APIKey    string // sent as "Authorization: Bearer KEY"; never logged, recorded or put in errors
	UserAgent string // "dsh-acp/<version>"; "" means DefaultUserAgent
	// RecordDir, when set, receives DIR/NNN.request.json (the body sent) and
	// DIR/NNN.sse (the response body as received, even when cut), NNN
	// counting the Stream calls of the process for that directory from 001.
	RecordDir string
	Client    *http.Client // nil means a client without total timeout; cancel through ctx
	Logger    *slog.Logger // nil discards
	// Backoff gives the wait after failed attempt number attempt (1-based)
	// before the next one; nil means 1 s, 2 s, 4 s... (at most 10 s) with ±20 % jitter.
	Backoff func(attempt int) time.Duration
	// MaxAttempts bounds the attempts per Stream call, first included; 0 means 3.
	MaxAttempts int
	// MaxRetryAfter caps the wait a Retry-After header may ask for; 0 means 30 s.
	MaxRetryAfter time.Duration
}

// Stream sends req and streams the answer (see Client). 429, 5xx and
// failures to get any response are retried, up to MaxAttempts attempts in
// all, waiting Backoff(attempt) or the response's Retry-After (capped by
// MaxRetryAfter); nothing is retried once a 2xx response has arrived.
//
// Errors (*Error): NO_API_KEY without a request when APIKey is empty;
// AUTH, RATE_LIMIT, INVALID_REQUEST, SERVER or HTTP_<n> for a non-2xx status
// (Message is the body's error.message, else "model endpoint error (HTTP n)");
// CONNECTION when no response came; EMPTY_RESPONSE for a 2xx with no body;
// the ParseStream errors; CANCELLED (unwrapping to ctx.Err()) when ctx ends.
func (h HTTP) Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	if h.APIKey == "" {
		return nil, &Error{Code: CodeNoAPIKey,
			Message: "no API key for the model endpoint: set DSH_API_KEY (or DEEPSEEK_API_KEY)"}
	}
	body, err := MarshalRequest(req)
	if err != nil {
		return nil, &Error{Code: CodeConfig, Message: "cannot encode the model request: " + err.Error(), Err: err}
	}
	var rec *recording
	if h.RecordDir != "" {
		rec = startRecording(h.RecordDir, body, h.APIKey, h.logger())
		defer rec.close()
	}
	res, err := h.stream(ctx, body, rec, onDelta)
	if e, ok := err.(*Error); ok {
		e.Message = h.redact(e.Message)
	}
	return res, err
}

// stream runs the attempts.
func (h HTTP) stream(ctx context.Context, body []byte, rec *recording, onDelta func(Delta)) (*Response, error) {
	url := strings.TrimRight(h.baseURL(), "/") + "/chat/completions"
	log := h.logger()
	maxAttempts := h.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	for attempt := 1; ; attempt++ {
		hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, &Error{Code: CodeConfig, Message: "invalid model base URL: " + err.Error(), Err: err}
		}
		hreq.Header.Set("Authorization", "Bearer "+h.APIKey)
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set("Accept", "text/event-stream")
		hreq.Header.Set("User-Agent", h.userAgent())
		log.Debug("model request", "url", url, "attempt", attempt, "bytes", len(body))

		resp, err := h.client().Do(hreq)
		var failure *Error
		var retryAfter time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, cancelled(ctx)
			}
			failure = &Error{Code: CodeConnection, Retryable: true, Err: err,
				Message: "cannot reach the model endpoint: " + err.Error()}
		case resp.StatusCode < 200 || resp.StatusCode > 299:
			b, rerr := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
			_ = resp.Body.Close()
			if rerr != nil && ctx.Err() != nil {
				return nil, cancelled(ctx)
			}
			if rec != nil {
				rec.writeBody(b)
			}
			failure = httpError(resp.StatusCode, b)
			retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		default:
			defer resp.Body.Close()
			var r io.Reader = resp.Body
			if rec != nil {
				r = io.TeeReader(r, rec.body())
			}
			return parseBody(ctx, r, onDelta)
		}
		if !failure.Retryable || attempt >= maxAttempts {
			return nil, failure
		}
		wait := h.backoff(attempt)
		if retryAfter > 0 {
			wait = min(retryAfter, h.maxRetryAfter())
		}
		log.Warn("model request failed, retrying", "code", failure.Code, "status", failure.Status,
			"attempt", attempt, "wait", wait, "err", h.redact(failure.Error()))
		if err := sleep(ctx, wait); err != nil {
			return nil, cancelled(ctx)
		}
	}
}

func (h HTTP) baseURL() string {
	if h.BaseURL == "" {
		return DefaultBaseURL
	}
	return h.BaseURL
}

func (h HTTP) userAgent() string {
	if h.UserAgent == "" {
		return DefaultUserAgent
	}
	return h.UserAgent
}

func (h HTTP) client() *http.Client {
	if h.Client == nil {
		return defaultHTTPClient
	}
	return h.Client
}

func (h HTTP) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}

func (h HTTP) backoff(attempt int) time.Duration {
	if h.Backoff != nil {
		return h.Backoff(attempt)
	}
	return DefaultBackoff(attempt)
}

func (h HTTP) maxRetryAfter() time.Duration {
	if h.MaxRetryAfter <= 0 {
		return DefaultMaxRetryAfter
	}
	return h.MaxRetryAfter
}

// redacted replaces the API key wherever it would be shown or recorded.
const redacted = "[redacted]"

// redactable returns the secret to redact, or nil when it is shorter than
// 8 bytes (replacing such a short string everywhere would mangle text).
func redactable(secret string) []byte {
	if len(secret) < 8 {
		return nil
	}
	return []byte(secret)
}

// redact removes the API key from s, should an endpoint echo it back.
func (h HTTP) redact(s string) string {
	if redactable(h.APIKey) == nil {
		return s
	}
	return strings.ReplaceAll(s, h.APIKey, redacted)
}
