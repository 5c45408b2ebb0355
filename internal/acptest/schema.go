// Package acptest checks what the agent writes against the official ACP
// v1 JSON Schema (../shared/acp/v1/schema.json beside the repository) and
// records JSON-RPC transcripts for golden tests.
package acptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// RepoRoot returns the repository root: the directory holding go.mod,
// found by walking up from the working directory (a package dir under go
// test).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("acptest: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// SkipOrFail skips the test with the formatted reason, except under
// CI=true, where a missing prerequisite is a failure.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true, so this fails instead of skipping)", msg)
	}
	t.Skip(msg)
}

// SharedDir returns the shared/ folder beside the repository. When it is
// absent the test is skipped with a message, except under CI=true, where
// it fails.
func SharedDir(t testing.TB) string {
	t.Helper()
	shared := filepath.Join(filepath.Dir(RepoRoot(t)), "shared")
	if _, err := os.Stat(filepath.Join(shared, "acp", "v1", "schema.json")); err != nil {
		SkipOrFail(t, "skipping: needs ../shared (the ACP schema and fixtures beside the repository), not found at %s", shared)
	}
	return shared
}

// Validator validates agent-written messages against the ACP v1 schema.
// Safe for concurrent use.
type Validator struct {
	root *jsonschema.Schema
	defs map[string]*jsonschema.Schema // by $defs name
	// byMethod: for an agent-written request or notification, and for the
	// agent's response to a client request, the $defs name of its params
	// or result.
	requests, notifications, responses map[string]string
}

var (
	loadOnce sync.Once
	loaded   *Validator
	loadErr  error
)

// Load compiles the schema in shared/acp/v1 (once per process).
func Load(t testing.TB) *Validator {
	t.Helper()
	shared := SharedDir(t)
	loadOnce.Do(func() { loaded, loadErr = compile(filepath.Join(shared, "acp", "v1", "schema.json")) })
	if loadErr != nil {
		t.Fatalf("acptest: %v", loadErr)
	}
	return loaded
}

func compile(path string) (*Validator, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://agentclientprotocol.com/schema/v1.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	v := &Validator{defs: map[string]*jsonschema.Schema{}, requests: map[string]string{}, notifications: map[string]string{}, responses: map[string]string{}}
	if v.root, err = c.Compile(url); err != nil {
		return nil, fmt.Errorf("compiling the schema: %w", err)
	}
	defs, _ := doc.(map[string]any)["$defs"].(map[string]any)
	for name, d := range defs {
		m, _ := d.(map[string]any)
		method, _ := m["x-method"].(string)
		side, _ := m["x-side"].(string)
		switch {
		case method == "":
		case side == "client" && strings.HasSuffix(name, "Request"):
			v.requests[method] = name
		case (side == "client" || side == "protocol") && strings.HasSuffix(name, "Notification"):
			v.notifications[method] = name
		case side == "agent" && strings.HasSuffix(name, "Response"):
			v.responses[method] = name
		}
		if v.defs[name], err = c.Compile(url + "#/$defs/" + name); err != nil {
			return nil, fmt.Errorf("compiling %s: %w", name, err)
		}
	}
	return v, nil
}

// Validate checks one line the agent wrote. method is the method of the
// client request a response answers ("" when unknown or not a response).
func (v *Validator) Validate(line []byte, method string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(line)))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := v.root.Validate(inst); err != nil {
		return fmt.Errorf("not an ACP message: %w", err)
	}
	m, ok := inst.(map[string]any)
	if !ok {
		return errors.New("not an object")
	}
	if m["jsonrpc"] != "2.0" {
		return errors.New(`"jsonrpc" is not "2.0"`)
	}
	check := func(def string, val any) error {
		s := v.defs[def]
		if s == nil {
			return fmt.Errorf("no schema type %s", def)
		}
		if err := s.Validate(val); err != nil {
			return fmt.Errorf("%s: %w", def, err)
		}
		return nil
	}
	if name, isCall := m["method"].(string); isCall {
		_, hasID := m["id"]
		table := v.notifications
		if hasID {
			table = v.requests
		}
		def, known := table[name]
		if !known {
			return fmt.Errorf("the agent may not send method %q", name)
		}
		return check(def, m["params"])
	}
	if e, isErr := m["error"]; isErr {
		return check("Error", e)
	}
	if method == "" {
		return nil
	}
	def, known := v.responses[method]
	if !known {
		return fmt.Errorf("no response type for method %q", method)
	}
	return check(def, m["result"])
}

// ValidateTranscript validates every agent line of a transcript, pairing
// responses with the methods of the client requests they answer.
func (v *Validator) ValidateTranscript(t testing.TB, tr *Transcript) {
	t.Helper()
	for _, l := range tr.Lines() {
		if l.FromClient {
			continue
		}
		if err := v.Validate(l.Raw, tr.MethodOf(l.Raw)); err != nil {
			t.Errorf("schema: %v\n  line: %s", err, truncate(l.Raw))
		}
	}
}

func truncate(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// idOf returns the raw id of a message, "" when absent.
func idOf(line []byte) string {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil {
		return ""
	}
	return string(m.ID)
}
