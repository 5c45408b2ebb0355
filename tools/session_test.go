package tools_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

type observedKey struct{}

func TestSession(t *testing.T) {
	s := tools.NewSession("s1", "/work")
	if s.ID() != "s1" || s.Cwd() != "/work" {
		t.Fatalf("ID/Cwd = %q %q", s.ID(), s.Cwd())
	}
	if v := s.Value(observedKey{}, nil); v != nil {
		t.Fatalf("lookup of an absent key = %v", v)
	}
	var inits atomic.Int32
	var wg sync.WaitGroup
	results := make([]any, 16)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.Value(observedKey{}, func() any {
				inits.Add(1)
				return &sync.Map{}
			})
		}()
	}
	wg.Wait()
	if inits.Load() != 1 {
		t.Errorf("init ran %d times, want 1", inits.Load())
	}
	for _, r := range results {
		if r != results[0] {
			t.Fatalf("callers got different values")
		}
	}
	if s.Value(observedKey{}, nil) != results[0] {
		t.Errorf("lookup lost the value")
	}
	// An init may use other keys.
	got := s.Value("outer", func() any { return s.Value("inner", func() any { return 7 }).(int) + 1 })
	if got != 8 || s.Value("inner", nil) != 7 {
		t.Errorf("nested init gave %v", got)
	}
}

// TestOnClose: close hooks run once, newest first; a hook added after the
// close runs at once.
func TestOnClose(t *testing.T) {
	s := tools.NewSession("s", "/")
	var got []string
	tools.OnClose(s, func() { got = append(got, "a") })
	tools.OnClose(s, func() { got = append(got, "b") })
	tools.CloseSession(s)
	tools.CloseSession(s)
	tools.OnClose(s, func() { got = append(got, "late") })
	if strings.Join(got, ",") != "b,a,late" {
		t.Errorf("hooks ran as %v", got)
	}
}
