package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/acptest"
)

// TestUnstableUpdateKinds: each kind of unstableUpdateDecoders is a
// sessionUpdate value of the unstable schema and not of the stable one,
// decodes to its own variant, and a full subagent_update round-trips and
// is a valid unstable SessionNotification.
func TestUnstableUpdateKinds(t *testing.T) {
	kinds := func(file string) map[string]bool {
		data, err := os.ReadFile(filepath.Join(acptest.SchemaDir(t), file))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Defs struct {
				SessionUpdate struct {
					OneOf []struct {
						Properties struct {
							SessionUpdate struct {
								Const string `json:"const"`
							} `json:"sessionUpdate"`
						} `json:"properties"`
					} `json:"oneOf"`
				} `json:"SessionUpdate"`
			} `json:"$defs"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, v := range doc.Defs.SessionUpdate.OneOf {
			out[v.Properties.SessionUpdate.Const] = true
		}
		return out
	}
	stable, unstable := kinds("schema.json"), kinds("schema.unstable.json")
	for kind, dec := range unstableUpdateDecoders {
		if stable[kind] || !unstable[kind] || updateDecoders[kind] != nil {
			t.Errorf("%s: stable %v, unstable %v", kind, stable[kind], unstable[kind])
		}
		if u, err := dec([]byte(`{"sessionId":"c"}`)); err != nil || u.SessionUpdateKind() != kind {
			t.Errorf("the decoder of %q gives %T (%v)", kind, u, err)
		}
	}
	title, in := "Find it", uint64(3)
	u := SubagentUpdate{SessionID: "c1", Title: &title, Capabilities: &SubagentSessionCapabilities{Cancel: &Empty{}},
		State: &SubagentState{State: SubagentIdle, StopReason: StopEndTurn, Usage: &Usage{TotalTokens: in, InputTokens: in}}, Cwd: "/w"}
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": SessionNotification{SessionID: "p", Update: u}})
	if err != nil {
		t.Fatal(err)
	}
	if err := acptest.Load(t).Validate(line, ""); err != nil {
		t.Errorf("%s: %v", line, err)
	}
	var n struct {
		Params SessionNotification `json:"params"`
	}
	if err := json.Unmarshal(line, &n); err != nil {
		t.Fatal(err)
	}
	back, _ := json.Marshal(n.Params)
	want, _ := json.Marshal(SessionNotification{SessionID: "p", Update: u})
	if string(back) != string(want) {
		t.Errorf("round trip\n got %s\nwant %s", back, want)
	}
}
