package acptest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestValidatorStableAndUnstable: stable methods are checked against
// schema.json, so an update kind only the unstable schema has is
// rejected there; a method only the unstable schema has (session/fork)
// is checked against schema.unstable.json, which accepts a good answer
// and rejects a bad one.
func TestValidatorStableAndUnstable(t *testing.T) {
	v := Load(t)
	planUpdate := `{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"p1","content":"# Plan"}}`
	un, err := v.unstable()
	if err != nil {
		t.Fatal(err)
	}
	// The variant is good unstable ACP: the stable check below rejects it
	// for being unstable, not for being malformed.
	if err := un.defs["SessionUpdate"].Validate(mustJSON(t, planUpdate)); err != nil {
		t.Fatalf("plan_update is not a valid unstable SessionUpdate: %v", err)
	}
	tests := []struct {
		name, line, method string
		wantErr            string // "" for valid
	}{
		{"stable update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, "", ""},
		{"unstable update kind on a stable method", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":` + planUpdate + `}}`, "", "SessionNotification (schema.json)"},
		{"gated unstable update kind", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","sessionId":"c1","state":{"state":"idle","stopReason":"end_turn"}}}}`, "", ""},
		{"bad gated unstable update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"subagent_update","title":"no id"}}}`, "", "SessionNotification (schema.unstable.json)"},
		{"stable response", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`, "session/prompt", ""},
		{"bad stable response", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"done"}}`, "session/prompt", "PromptResponse (schema.json)"},
		{"stable response with the unstable usage", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"totalTokens":3,"inputTokens":1,"outputTokens":2,"cachedReadTokens":0}}}`, "session/prompt", ""},
		{"bad unstable usage on a stable response", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"totalTokens":-3,"inputTokens":1}}}`, "session/prompt", "PromptResponse (schema.unstable.json)"},
		{"unstable method response", `{"jsonrpc":"2.0","id":4,"result":{"sessionId":"s2"}}`, "session/fork", ""},
		{"bad unstable method response", `{"jsonrpc":"2.0","id":4,"result":{"modes":null}}`, "session/fork", "ForkSessionResponse (schema.unstable.json)"},
		{"error response", `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}`, "session/fork", ""},
		{"client method from the agent", `{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`, "", `may not send method "session/prompt"`},
		{"unknown method", `{"jsonrpc":"2.0","id":7,"result":{}}`, "no/such", `no response type for method "no/such"`},
		{"not JSON-RPC 2.0", `{"jsonrpc":"1.0","id":8,"result":{}}`, "", `"jsonrpc" is not "2.0"`},
	}
	for _, tt := range tests {
		err := v.Validate([]byte(tt.line), tt.method)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSchemaDirNeedsTheSDK: without interop/node_modules, or with another
// SDK version than package.json pins, the error says to run npm ci.
func TestSchemaDirNeedsTheSDK(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("interop/package.json", `{"dependencies":{"@agentclientprotocol/sdk":"2.4.0"}}`)
	if _, err := schemaDir(root); err == nil || !strings.Contains(err.Error(), "not installed") || !strings.Contains(err.Error(), NpmCI) {
		t.Errorf("without node_modules: %v", err)
	}
	write("interop/node_modules/@agentclientprotocol/sdk/package.json", `{"version":"2.3.9"}`)
	if _, err := schemaDir(root); err == nil || !strings.Contains(err.Error(), "pins 2.4.0") || !strings.Contains(err.Error(), NpmCI) {
		t.Errorf("with another version: %v", err)
	}
	write("interop/node_modules/@agentclientprotocol/sdk/package.json", `{"version":"2.4.0"}`)
	if _, err := schemaDir(root); err == nil || !strings.Contains(err.Error(), "schema/v1/schema.json") {
		t.Errorf("without the schema files: %v", err)
	}
	write("interop/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json", `{}`)
	write("interop/node_modules/@agentclientprotocol/sdk/schema/v1/schema.unstable.json", `{}`)
	if dir, err := schemaDir(root); err != nil || dir != filepath.Join(root, "interop", "node_modules", "@agentclientprotocol", "sdk", "schema", "v1") {
		t.Errorf("installed: %q, %v", dir, err)
	}
}

// TestRepositoryPinsTheSDK: interop/package.json pins an exact version
// and package-lock.json locks the same one.
func TestRepositoryPinsTheSDK(t *testing.T) {
	root := RepoRoot(t)
	pkg, err := os.ReadFile(filepath.Join(root, "interop", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.ReadFile(filepath.Join(root, "interop", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	var l struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(pkg, &p); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(lock, &l); err != nil {
		t.Fatal(err)
	}
	pin := p.Dependencies[SDKPackage]
	if pin == "" || strings.ContainsAny(pin, "^~<>=* x") {
		t.Errorf("interop/package.json pins %s as %q, want an exact version", SDKPackage, pin)
	}
	if got := l.Packages["node_modules/"+SDKPackage].Version; got != pin {
		t.Errorf("package-lock.json locks %s %q, package.json pins %q", SDKPackage, got, pin)
	}
}
