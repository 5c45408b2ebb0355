package permission

import (
	"reflect"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// A network call is judged by its host: asked in default and
// acceptEdits, refused in plan, until "always" is answered for that host;
// another host asks again; bypassPermissions runs it.
func TestNetworkPerHost(t *testing.T) {
	cwd := t.TempDir()
	call := func(host string) Call {
		return Call{Tool: "web_fetch", Class: tools.ClassNetwork, Host: host, Cwd: cwd}
	}
	m := NewMemory()
	for mode, want := range map[string]Decision{ModeDefault: Ask, ModeAcceptEdits: Ask, ModePlan: Refuse, ModeBypass: Allow} {
		if d, _ := m.Decide(mode, call("docs.example.com")); d != want {
			t.Errorf("%s, unknown host: %v, want %v", mode, d, want)
		}
	}
	r := m.Remember(call("docs.example.com"), true)
	if !reflect.DeepEqual(r, Rule{Tool: "web_fetch", Allow: true, Hosts: []string{"docs.example.com"}}) {
		t.Errorf("remembered %+v", r)
	}
	for _, mode := range []string{ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass} {
		if d, _ := m.Decide(mode, call("docs.example.com")); d != Allow {
			t.Errorf("%s, allowed host: %v", mode, d)
		}
		if d, _ := m.Decide(mode, call("other.example.com")); mode != ModeBypass && d == Allow {
			t.Errorf("%s, other host runs unasked", mode)
		}
	}
	m.Remember(call("evil.example"), false)
	if d, why := m.Decide(ModeDefault, call("evil.example")); d != Refuse || why != "the user refused web_fetch for evil.example" {
		t.Errorf("rejected host: %v %q", d, why)
	}
	// Restored from a log, the rule works the same; a clone keeps it.
	n := NewMemory()
	n.Restore(r)
	if d, _ := n.Clone().Decide(ModePlan, call("docs.example.com")); d != Allow {
		t.Errorf("restored rule: %v", d)
	}
}
