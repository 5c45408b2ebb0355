package tools_test

import (
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

type carriedKey struct{}

type counter struct{ n int }

func init() {
	tools.Carry(carriedKey{}, func(v any) any { c := *v.(*counter); return &c })
}

// TestCarry: a session that replaces another (Inherit) shares its
// carried values; a fork gets a copy; other values stay behind.
func TestCarry(t *testing.T) {
	src := tools.NewSession("s1", "/w")
	src.Value(carriedKey{}, func() any { return &counter{n: 1} })
	src.Value(observedKey{}, func() any { return "not carried" })
	again := tools.NewSession("s1", "/w")
	tools.Inherit(again, src)
	if again.Value(carriedKey{}, nil) != src.Value(carriedKey{}, nil) {
		t.Error("the reattached session does not share the carried value")
	}
	if v := again.Value(observedKey{}, nil); v != nil {
		t.Errorf("a value not declared carried came along: %v", v)
	}
	fork := tools.NewSession("s2", "/w")
	tools.Fork(fork, src)
	c, _ := fork.Value(carriedKey{}, nil).(*counter)
	if c == nil || c == src.Value(carriedKey{}, nil) || c.n != 1 {
		t.Fatalf("the fork's value %+v", c)
	}
	c.n = 5
	if src.Value(carriedKey{}, nil).(*counter).n != 1 {
		t.Error("the fork's change reached the source")
	}
}

// TestRootsAndNotify: the additional directories come after the cwd in
// Roots, InRoots compares by path segment, and Notify reaches the
// notifier with defaults filled in (and nothing without one).
func TestRootsAndNotify(t *testing.T) {
	s := tools.NewSession("s1", "/work/p")
	tools.SetAdditionalDirectories(s, []string{"/work/q"})
	if got := tools.Roots(s); len(got) != 2 || got[0] != "/work/p" || got[1] != "/work/q" {
		t.Errorf("Roots = %q", got)
	}
	for p, want := range map[string]bool{"/work/q": true, "/work/q/a": true, "/work/qq/a": false, "/work/p/x": true, "/work": false} {
		if got := tools.InRoots(tools.Roots(s), p); got != want {
			t.Errorf("InRoots(%s) = %v", p, got)
		}
	}
	tools.Notify(s, tools.Notice{Title: "dropped"}) // no notifier yet
	var got []tools.Notice
	tools.SetNotifier(s, func(n tools.Notice) { got = append(got, n) })
	tools.Notify(s, tools.Notice{Title: "Sandbox unavailable", Description: "d"})
	tools.Notify(s, tools.Notice{Severity: tools.NoticeError})
	if len(got) != 2 || got[0] != (tools.Notice{Severity: tools.NoticeInfo, Title: "Sandbox unavailable", Description: "d"}) ||
		got[1] != (tools.Notice{Severity: tools.NoticeError, Title: tools.NoticeError}) {
		t.Errorf("notices %+v", got)
	}
}
