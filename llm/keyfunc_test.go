package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestKeyFunc: the key is asked for at every Stream call; its error is
// NO_API_KEY with the error's own text, and no request is made.
func TestKeyFunc(t *testing.T) {
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		_, _ = io.WriteString(w, okStream)
	}))
	defer srv.Close()
	key, keyErr := "", errors.New("The credentials file /x is open to other users")
	h := HTTP{BaseURL: srv.URL, KeyFunc: func() (string, error) { return key, keyErr }}
	_, err := h.Stream(context.Background(), testReq, nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeNoAPIKey || e.Message != keyErr.Error() || !errors.Is(err, keyErr) {
		t.Errorf("KeyFunc error: %v", err)
	}
	key, keyErr = "sk-first", nil
	if _, err := h.Stream(context.Background(), testReq, nil); err != nil {
		t.Fatal(err)
	}
	key = "sk-second"
	if _, err := h.Stream(context.Background(), testReq, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(auth, ",") != "Bearer sk-first,Bearer sk-second" {
		t.Errorf("Authorization headers %v", auth)
	}
	key = ""
	if _, err := h.Stream(context.Background(), testReq, nil); errCode(err) != CodeNoAPIKey || !strings.Contains(err.Error(), "dsh-acp login") {
		t.Errorf("empty key from KeyFunc: %v", err)
	}
}
