package llm

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultBackoff is the wait after failed attempt number attempt (1-based):
// 1 s doubled per attempt, at most 10 s, times a random factor in [0.8, 1.2).
func DefaultBackoff(attempt int) time.Duration {
	d := time.Second
	for i := 1; i < attempt && d < 10*time.Second; i++ {
		d *= 2
	}
	d = min(d, 10*time.Second)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// parseRetryAfter reads a Retry-After header value: delay seconds or an HTTP
// date. It returns 0 when the value is absent, unreadable or not in the future.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		if s > int64(24*time.Hour/time.Second) {
			s = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// sleep waits d or until ctx ends, returning ctx's error in that case.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
