package bridge

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// updateRecorder is an editor that records the session updates it gets.
type updateRecorder struct {
	acp.Client
	mu      sync.Mutex
	updates []acp.Update
}

func (r *updateRecorder) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	r.mu.Lock()
	r.updates = append(r.updates, n.Update)
	r.mu.Unlock()
	return nil
}

func (r *updateRecorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, u := range r.updates {
		out = append(out, u.SessionUpdateKind())
	}
	return out
}

// TestAgentModeChangeAnnouncesBoth: a mode change the agent makes itself
// is announced on both surfaces (current_mode_update and
// config_option_update, the option showing the new mode) and logged; an
// unknown mode or session is refused and changes nothing.
func TestAgentModeChangeAnnouncesBoth(t *testing.T) {
	rec := &updateRecorder{}
	b := New(Config{Tools: tools.NewRegistry(), Agent: agent.New(agent.Config{Model: "m"})})
	b.SetClient(rec)
	s := b.openSession("sess_a", t.TempDir(), nil)
	if err := b.SetMode("sess_a", "plan"); err != nil {
		t.Fatal(err)
	}
	if got := rec.kinds(); !reflect.DeepEqual(got, []string{"current_mode_update", "config_option_update"}) {
		t.Fatalf("announced %q", got)
	}
	cu := rec.updates[1].(acp.ConfigOptionUpdate)
	if m := cu.ConfigOptions[len(cu.ConfigOptions)-1]; m.ID != ConfigMode || m.Select.CurrentValue != "plan" {
		t.Errorf("mode option %+v", m)
	}
	if restoredConfig(s.agent.Store.Events(), configState{Mode: "default"}).Mode != "plan" {
		t.Error("the agent's mode change was not logged")
	}
	if err := b.SetMode("sess_a", "plan"); err != nil || len(rec.kinds()) != 2 {
		t.Errorf("the same mode again: %v, %q", err, rec.kinds())
	}
	if err := b.SetMode("sess_a", "yolo"); err == nil {
		t.Error("an unknown mode was accepted")
	}
	if err := b.SetMode("sess_nope", "plan"); err == nil {
		t.Error("an unknown session was accepted")
	}
	if s.perm.currentMode() != "plan" {
		t.Errorf("mode %q", s.perm.currentMode())
	}
}

// TestRestoredConfig: the last valid logged value of each option wins;
// junk values are skipped; thinking is restored only where offered.
func TestRestoredConfig(t *testing.T) {
	ev := func(d session.Data) session.Event { return session.Event{Data: d} }
	events := []session.Event{
		ev(session.ConfigChange{ConfigID: ConfigModel, Value: "a"}),
		ev(session.ModeChange{ModeID: "plan"}),
		ev(session.ConfigChange{ConfigID: ConfigThinking, Value: "max"}),
		ev(session.ConfigChange{ConfigID: ConfigModel, Value: "b"}),
		ev(session.ConfigChange{ConfigID: ConfigModel, Value: " "}),
		ev(session.ConfigChange{ConfigID: ConfigThinking, Value: "ultra"}),
		ev(session.ModeChange{ModeID: "yolo"}),
		ev(session.ConfigChange{ConfigID: "colour", Value: "red"}),
	}
	def := configState{Model: "d", Thinking: "high", Mode: "default"}
	if got, want := restoredConfig(events, def), (configState{Model: "b", Thinking: "max", Mode: "plan"}); got != want {
		t.Errorf("restored %+v, want %+v", got, want)
	}
	// A level an earlier version logged under its old name.
	old := append(events, ev(session.ConfigChange{ConfigID: ConfigThinking, Value: "on"}))
	if got := restoredConfig(old, def); got.Thinking != "high" {
		t.Errorf("logged \"on\" restored as %q, want high", got.Thinking)
	}
	noThinking := configState{Model: "d", Mode: "default"}
	if got := restoredConfig(events, noThinking); got.Thinking != "" {
		t.Errorf("thinking restored where not offered: %+v", got)
	}
	if got := restoredConfig(nil, def); got != def {
		t.Errorf("no events: %+v", got)
	}
}
