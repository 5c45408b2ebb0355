package llm

import (
	"context"
	"errors"
	"fmt"
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
	// DefaultIdleTimeout is how long the endpoint may send nothing (no
	// response headers, no byte of the body) before the request is
	// given up (--model-idle-timeout).
	DefaultIdleTimeout = 120 * time.Second
)

// errorBodyLimit bounds, in bytes, how much of a failed response is read.
const errorBodyLimit = 64 << 10

// defaultHTTPClient has no total timeout: streams are long and bounded by ctx.
var defaultHTTPClient = &http.Client{}

// HTTP is the live client: it POSTs to {BaseURL}/chat/completions and
// parses the event stream with ParseStream. The zero value of every field is
// usable except APIKey (or KeyFunc). It is safe for concurrent use.
type HTTP struct {
	BaseURL string // endpoint root without /chat/completions; "" means DefaultBaseURL
	APIKey  string // sent as "Authorization: Bearer KEY"; never logged, recorded or put in errors
	// KeyFunc, when set, is asked for the key at every Stream call instead
	// of APIKey (so a key stored while the agent runs is used at once); its
	// error fails the call with NO_API_KEY, the error's text as Message.
	KeyFunc   func() (string, error)
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
	// IdleTimeout is how long the endpoint may send nothing at all (while
	// the response headers are awaited, and between any two reads of the
	// body; keep-alive comments count) before the attempt ends with
	// IDLE_TIMEOUT; 0 means DefaultIdleTimeout, a negative value none.
	IdleTimeout time.Duration
}

// Stream sends req and streams the answer (see Client). 429, 5xx and
// failures to get any response are retried, up to MaxAttempts attempts in
// all, waiting Backoff(attempt) or the response's Retry-After (capped by
// MaxRetryAfter); nothing is retried once a 2xx response has arrived.
//
// Errors (*Error): NO_API_KEY without a request when APIKey is empty
// (or KeyFunc fails);
// AUTH, RATE_LIMIT, INVALID_REQUEST, SERVER or HTTP_<n> for a non-2xx status
// (Message is the body's error.message, else "model endpoint error (HTTP n)");
// CONNECTION when no response came; IDLE_TIMEOUT when the endpoint sent
// nothing for IdleTimeout (retried like a failed connection while no
// delta has reached onDelta; once one has, the answer cannot be taken
// back and the error is returned); EMPTY_RESPONSE for a 2xx with no
// body; the ParseStream errors; CANCELLED (unwrapping to ctx.Err()) when
// ctx ends, at once, whatever the idle timer.
func (h HTTP) Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	h, err := h.withKey()
	if err != nil {
		return nil, err
	}
	body := requestBody{req: req}
	body.head, body.tail, err = requestEnvelope(req)
	if err != nil {
		return nil, &Error{Code: CodeConfig, Message: "cannot encode the model request: " + err.Error(), Err: err}
	}
	var rec *recording
	if h.RecordDir != "" {
		// A recording keeps the body sent, so it is encoded whole.
		data, err := MarshalRequest(req)
		if err != nil {
			return nil, &Error{Code: CodeConfig, Message: "cannot encode the model request: " + err.Error(), Err: err}
		}
		body.data = data
		rec = startRecording(h.RecordDir, data, h.APIKey, h.logger())
		defer rec.close()
	}
	res, err := h.stream(ctx, body, rec, onDelta, req.OnRetry)
	if e, ok := err.(*Error); ok {
		e.Message = h.redact(e.Message)
	}
	return res, err
}

// withKey returns h with APIKey set from KeyFunc when there is one, or a
// NO_API_KEY error when no key is known.
func (h HTTP) withKey() (HTTP, error) {
	if h.KeyFunc != nil {
		k, err := h.KeyFunc()
		if err != nil {
			return h, &Error{Code: CodeNoAPIKey, Message: err.Error(), Err: err}
		}
		h.APIKey = k
	}
	if h.APIKey == "" {
		return h, &Error{Code: CodeNoAPIKey, Message: NoKeyMessage}
	}
	return h, nil
}

// NoKeyMessage is the NO_API_KEY message when no key is configured.
const NoKeyMessage = "no API key for the model endpoint: run `dsh-acp login`, or set DSH_API_KEY (or DEEPSEEK_API_KEY)"

// stream runs the attempts.
func (h HTTP) stream(ctx context.Context, body requestBody, rec *recording, onDelta func(Delta), onRetry func(Retry)) (*Response, error) {
	url := strings.TrimRight(h.baseURL(), "/") + "/chat/completions"
	log := h.logger()
	maxAttempts := h.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	streamed := false // a delta reached onDelta: no more retries
	seen := func(d Delta) {
		streamed = true
		if onDelta != nil {
			onDelta(d)
		}
	}
	for attempt := 1; ; attempt++ {
		res, failure, retryAfter, final := h.attempt(ctx, url, body, attempt, rec, seen)
		if failure == nil {
			return res, nil
		}
		if final || streamed || failure.Code == CodeCancelled {
			return res, failure
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
		if onRetry != nil {
			onRetry(Retry{Attempt: attempt, MaxAttempts: maxAttempts, Code: failure.Code, Status: failure.Status,
				Message: h.redact(failure.Message), Wait: wait})
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, cancelled(ctx)
		}
	}
}

// errIdle is the cause of an attempt ended by the idle timer.
var errIdle = errors.New("model endpoint idle")

// attempt makes one request. It returns the parsed response (or what was
// assembled before a failure of the body), or the failure with its
// Retry-After wait; final reports a failure that must not be retried: a
// 2xx body that failed other than by the idle timer. The attempt's
// context ends when ctx does and when the endpoint sends nothing for the
// idle timeout (an idle watch reset by every read).
func (h HTTP) attempt(ctx context.Context, url string, body requestBody, attempt int, rec *recording, onDelta func(Delta)) (res *Response, failure *Error, retryAfter time.Duration, final bool) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := h.idleTimeout()
	watch := newIdleWatch(idle, func() { cancel(errIdle) })
	defer watch.stop()
	idleErr := func() *Error {
		if ctx.Err() == nil && errors.Is(context.Cause(actx), errIdle) {
			return &Error{Code: CodeIdleTimeout, Retryable: true, Err: errIdle,
				Message: fmt.Sprintf("the model endpoint sent nothing for %g s (--model-idle-timeout); the request was given up", idle.Seconds())}
		}
		return nil
	}
	hreq, err := body.request(actx, url)
	if err != nil {
		return nil, &Error{Code: CodeConfig, Message: "invalid model base URL: " + err.Error(), Err: err}, 0, true
	}
	hreq.Header.Set("Authorization", "Bearer "+h.APIKey)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("User-Agent", h.userAgent())
	h.logger().Debug("model request", "url", url, "attempt", attempt, "messages", len(body.req.Messages))

	resp, err := h.client().Do(hreq)
	switch {
	case err != nil:
		if ie := idleErr(); ie != nil {
			return nil, ie, 0, false
		}
		if ctx.Err() != nil {
			return nil, cancelled(ctx), 0, true
		}
		return nil, &Error{Code: CodeConnection, Retryable: true, Err: err,
			Message: "cannot reach the model endpoint: " + err.Error()}, 0, false
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		b, rerr := io.ReadAll(io.LimitReader(watch.reader(resp.Body), errorBodyLimit))
		_ = resp.Body.Close()
		if ie := idleErr(); ie != nil {
			return nil, ie, 0, false
		}
		if rerr != nil && ctx.Err() != nil {
			return nil, cancelled(ctx), 0, true
		}
		if rec != nil {
			rec.writeBody(b)
		}
		return nil, httpError(resp.StatusCode, b), parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), false
	}
	defer resp.Body.Close()
	r := watch.reader(resp.Body)
	if rec != nil {
		r = io.TeeReader(r, rec.body())
	}
	res, err = parseBody(ctx, r, onDelta)
	if ie := idleErr(); ie != nil {
		// Retried unless a delta was streamed (the caller knows).
		return res, ie, 0, false
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: CodeStreamClosed, Message: err.Error(), Err: err}
		}
		return res, e, 0, true
	}
	return res, nil, 0, false
}

// idleWatch calls fire when reset has not been called for d (d <= 0:
// never).
type idleWatch struct {
	d time.Duration
	t *time.Timer
}

func newIdleWatch(d time.Duration, fire func()) *idleWatch {
	w := &idleWatch{d: d}
	if d > 0 {
		w.t = time.AfterFunc(d, fire)
	}
	return w
}

func (w *idleWatch) reset() {
	if w.t != nil {
		w.t.Reset(w.d)
	}
}

func (w *idleWatch) stop() {
	if w.t != nil {
		w.t.Stop()
	}
}

// reader returns r with every read that returns bytes resetting w.
func (w *idleWatch) reader(r io.Reader) io.Reader { return idleReader{r: r, w: w} }

type idleReader struct {
	r io.Reader
	w *idleWatch
}

func (r idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.w.reset()
	}
	return n, err
}

func (h HTTP) idleTimeout() time.Duration {
	if h.IdleTimeout == 0 {
		return DefaultIdleTimeout
	}
	return h.IdleTimeout
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
