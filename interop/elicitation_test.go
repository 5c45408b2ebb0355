package interop

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSDKClientElicitation runs testdata/ask-user with the official SDK
// client advertising form elicitation, answering the agent's
// elicitation/create with each action: the SDK parses the request
// against its schema (a request it rejected would fail the run), the
// agent asks no permission, the answer reaches the model (the card's
// rawOutput) and the card, and the turn ends with the recorded text.
func TestSDKClientElicitation(t *testing.T) {
	env := needNode(t)
	agent := buildAgent(t, env.root)
	dir := filepath.Join(env.dir, "testdata", "ask-user")
	const callID = "call_00_Vb7kQ2mXr9TzL4nWp8cYd3Hs"
	for _, c := range []struct {
		name, answer, rawOutput, line string
	}{
		{"accept", `{"action":"accept","content":{"answer":"SQLite"}}`, "The user answered: SQLite", "Answer: SQLite"},
		{"decline", `{"action":"decline"}`, "The user declined to answer.", "Declined."},
		{"cancel", `{"action":"cancel"}`, "The user dismissed the question without answering.", "Dismissed."},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, code := runNode(t, env, agent, dir, "INTEROP_ELICITATION=["+c.answer+"]")
			checkCleanRun(t, r, code)
			if len(r.ElicitationRequests) != 1 || len(r.PermissionRequests) != 0 {
				t.Fatalf("elicitation requests %v, permission requests %v; want one elicitation, no permission", r.ElicitationRequests, r.PermissionRequests)
			}
			e := r.ElicitationRequests[0]
			schema, _ := json.Marshal(e["requestedSchema"])
			wantSchema := `{"properties":{"answer":{"enum":["Postgres","SQLite"],"title":"Answer","type":"string"}},"required":["answer"],"type":"object"}`
			if e["mode"] != "form" || e["message"] != "Which database should the service use?" || e["toolCallId"] != callID ||
				len(r.SessionIDs) != 1 || e["sessionId"] != r.SessionIDs[0] || string(schema) != wantSchema {
				t.Errorf("elicitation/create %v (schema %s)", e, schema)
			}
			if !reflect.DeepEqual(r.StopReasons, []string{"end_turn"}) || !reflect.DeepEqual(r.Messages, []string{"NOTED"}) {
				t.Errorf("stop reasons %q messages %q", r.StopReasons, r.Messages)
			}
			if len(r.ToolCalls) != 1 {
				t.Fatalf("tool calls %v, want one", r.ToolCalls)
			}
			tc := r.ToolCalls[0]
			if tc["toolCallId"] != callID || tc["kind"] != "other" || tc["status"] != "completed" ||
				tc["title"] != "Which database should the service use?" || tc["rawOutput"] != c.rawOutput {
				t.Errorf("card %v", tc)
			}
			content, _ := json.Marshal(tc["content"])
			for _, want := range []string{"1. Postgres\\n2. SQLite", c.line} {
				if !strings.Contains(string(content), want) {
					t.Errorf("card content %s lacks %q", content, want)
				}
			}
		})
	}
}
