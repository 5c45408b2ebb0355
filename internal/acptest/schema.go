// Package acptest checks what the agent writes against the official ACP
// v1 JSON Schema and records JSON-RPC transcripts for golden tests.
//
// The schema comes from the official ACP TypeScript SDK that the README's
// test command installs, `(cd interop && npm ci)`:
// interop/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json for
// the stable protocol and schema.unstable.json beside it for the methods
// only the unstable protocol has (session/fork, ...). The SDK version is
// pinned exactly in interop/package.json (and interop/package-lock.json).
// A test that needs the schema fails, never skips, when the package is
// missing or is not the pinned version.
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

// SDKPackage is the npm package whose schema the tests use.
const SDKPackage = "@agentclientprotocol/sdk"

// NpmCI is the command that installs SDKPackage, as the README gives it.
const NpmCI = "(cd interop && npm ci)"

// SchemaDir returns the directory holding the SDK's schema.json and
// schema.unstable.json (interop/node_modules/@agentclientprotocol/sdk/
// schema/v1 under the repository root). It fails t, with a message saying
// to run NpmCI, when the package is not installed or its version is not
// the one interop/package.json pins.
func SchemaDir(t testing.TB) string {
	t.Helper()
	dir, err := schemaDir(RepoRoot(t))
	if err != nil {
		t.Fatalf("acptest: %v", err)
	}
	return dir
}

func schemaDir(root string) (string, error) {
	var pin struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(root, "interop", "package.json"))
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(b, &pin); err != nil {
		return "", fmt.Errorf("interop/package.json: %w", err)
	}
	want := pin.Dependencies[SDKPackage]
	if want == "" {
		return "", fmt.Errorf("interop/package.json does not pin %s", SDKPackage)
	}
	pkg := filepath.Join(root, "interop", "node_modules", filepath.FromSlash(SDKPackage))
	var got struct {
		Version string `json:"version"`
	}
	b, err = os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		return "", fmt.Errorf("the ACP schema comes from the npm package %s, not installed at %s: run `%s` first", SDKPackage, pkg, NpmCI)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		return "", fmt.Errorf("%s/package.json: %w", pkg, err)
	}
	if got.Version != want {
		return "", fmt.Errorf("%s is version %s, interop/package.json pins %s: run `%s` again", SDKPackage, got.Version, want, NpmCI)
	}
	dir := filepath.Join(pkg, "schema", "v1")
	for _, name := range []string{"schema.json", "schema.unstable.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%s %s has no schema/v1/%s (%v): run `%s` again", SDKPackage, got.Version, name, err, NpmCI)
		}
	}
	return dir, nil
}

// Validator validates agent-written messages against the ACP v1 schema of
// the SDK: messages of a method the stable schema (schema.json) defines
// are checked against it, messages of a method only the unstable schema
// (schema.unstable.json) defines against that one.
//
// The unstable schema is not used for everything: it widens stable types
// too (more session/update kinds, more fields in responses), so a stable
// method's message that only an unstable client understands would pass.
// Safe for concurrent use.
type Validator struct {
	stable   *schemaSet
	unstable func() (*schemaSet, error) // compiled on first use
}

// schemaSet is one compiled schema file.
type schemaSet struct {
	file string
	root *jsonschema.Schema
	defs map[string]*jsonschema.Schema // by $defs name
	// For an agent-written request or notification, and for the agent's
	// response to a client request: the $defs name of its params or
	// result, by method (from x-method and x-side).
	requests, notifications, responses map[string]string
	// kinds are the sessionUpdate values of its SessionUpdate type.
	kinds map[string]bool
}

var (
	loadOnce sync.Once
	loaded   *Validator
	loadErr  error
)

// Load returns the validator for the SDK's schema (compiled once per
// process). It fails t when the SDK is not installed (see SchemaDir) or
// the schema does not compile.
func Load(t testing.TB) *Validator {
	t.Helper()
	dir := SchemaDir(t)
	loadOnce.Do(func() { loaded, loadErr = newValidator(dir) })
	if loadErr != nil {
		t.Fatalf("acptest: %v", loadErr)
	}
	return loaded
}

func newValidator(dir string) (*Validator, error) {
	stable, err := compile(filepath.Join(dir, "schema.json"))
	if err != nil {
		return nil, err
	}
	return &Validator{
		stable:   stable,
		unstable: sync.OnceValues(func() (*schemaSet, error) { return compile(filepath.Join(dir, "schema.unstable.json")) }),
	}, nil
}

func compile(path string) (*schemaSet, error) {
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
	url := "https://agentclientprotocol.com/schema/v1/" + filepath.Base(path)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s := &schemaSet{file: filepath.Base(path), defs: map[string]*jsonschema.Schema{}, requests: map[string]string{}, notifications: map[string]string{}, responses: map[string]string{}}
	if s.root, err = c.Compile(url); err != nil {
		return nil, fmt.Errorf("compiling %s: %w", path, err)
	}
	defs, _ := doc.(map[string]any)["$defs"].(map[string]any)
	s.kinds = updateKinds(defs)
	for name, d := range defs {
		m, _ := d.(map[string]any)
		method, _ := m["x-method"].(string)
		side, _ := m["x-side"].(string)
		switch {
		case method == "":
		case side == "client" && strings.HasSuffix(name, "Request"):
			s.requests[method] = name
		case (side == "client" || side == "protocol") && strings.HasSuffix(name, "Notification"):
			s.notifications[method] = name
		case side == "agent" && strings.HasSuffix(name, "Response"):
			s.responses[method] = name
		}
		if s.defs[name], err = c.Compile(url + "#/$defs/" + name); err != nil {
			return nil, fmt.Errorf("compiling %s of %s: %w", name, path, err)
		}
	}
	return s, nil
}

// Validate checks one line the agent wrote. method is the method of the
// client request a response answers ("" when unknown or not a response;
// a result is then checked only against the message envelope).
func (v *Validator) Validate(line []byte, method string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(line)))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	m, ok := inst.(map[string]any)
	if !ok {
		return errors.New("not an object")
	}
	if m["jsonrpc"] != "2.0" {
		return errors.New(`"jsonrpc" is not "2.0"`)
	}
	// What the line is: a call (request or notification) of a method, an
	// error response, or a result for the method it answers.
	name, isCall := m["method"].(string)
	_, hasID := m["id"]
	e, isErr := m["error"]
	if !isCall {
		name = method
	}
	set, def, known, err := v.schemaFor(m, name, isCall, hasID, isErr)
	if err != nil {
		return err
	}
	if err := set.root.Validate(inst); err != nil {
		return fmt.Errorf("not an ACP message (%s): %w", set.file, err)
	}
	switch {
	case isCall && !known:
		return fmt.Errorf("the agent may not send method %q", name)
	case isCall:
		return set.check(def, m["params"])
	case isErr:
		return set.check("Error", e)
	case method == "":
		return nil
	case !known:
		return fmt.Errorf("no response type for method %q", method)
	}
	if err := set.check(def, m["result"]); err != nil {
		return err
	}
	return v.unstableFields(set, def, m["result"])
}

// schemaFor picks the schema a message m of method name is checked
// against: the stable one, else the unstable one for a method only it
// has (not for an error response), and for a session/update whose kind
// only the unstable schema has (sent to clients that advertise it). def
// is the method's type in the set's request, notification or response
// table (which one by isCall and hasID); known is false when no table
// has the method.
func (v *Validator) schemaFor(m map[string]any, name string, isCall, hasID, isErr bool) (set *schemaSet, def string, known bool, err error) {
	table := func(s *schemaSet) map[string]string {
		switch {
		case isCall && hasID:
			return s.requests
		case isCall:
			return s.notifications
		default:
			return s.responses
		}
	}
	set = v.stable
	def, known = table(set)[name]
	if !known && name != "" && !isErr {
		un, err := v.unstable()
		if err != nil {
			return nil, "", false, fmt.Errorf("acptest: %w", err)
		}
		if d, ok := table(un)[name]; ok {
			set, def, known = un, d, true
		}
	}
	if kind := updateKind(m); isCall && name == "session/update" && gatedKinds[kind] && !set.kinds[kind] {
		// A kind only the unstable schema has that the agent sends only
		// to a client advertising it: checked against that schema.
		un, err := v.unstable()
		if err != nil {
			return nil, "", false, fmt.Errorf("acptest: %w", err)
		}
		if un.kinds[kind] {
			set, def = un, un.notifications[name]
		}
	}
	return set, def, known, nil
}

// check validates val against the set's schema type def.
func (s *schemaSet) check(def string, val any) error {
	sch := s.defs[def]
	if sch == nil {
		return fmt.Errorf("no schema type %s in %s", def, s.file)
	}
	if err := sch.Validate(val); err != nil {
		return fmt.Errorf("%s (%s): %w", def, s.file, err)
	}
	return nil
}

// unstableFields checks a stable response's result that carries fields
// the stable type does not define (the unstable schema's extensions of
// a stable response, such as session/prompt's usage) against the
// unstable schema's type of the same name, so those fields are checked
// too and not merely allowed.
func (v *Validator) unstableFields(set *schemaSet, def string, result any) error {
	obj, ok := result.(map[string]any)
	if !ok || set != v.stable || set.defs[def] == nil {
		return nil
	}
	extra := false
	for k := range obj {
		if _, defined := set.defs[def].Properties[k]; !defined {
			extra = true
		}
	}
	if !extra {
		return nil
	}
	un, err := v.unstable()
	if err != nil {
		return fmt.Errorf("acptest: %w", err)
	}
	if s := un.defs[def]; s != nil {
		if err := s.Validate(result); err != nil {
			return fmt.Errorf("%s (%s): %w", def, un.file, err)
		}
	}
	return nil
}

// gatedKinds are the session/update kinds of the unstable schema only
// that the agent sends, each only to a client whose capabilities ask for
// it (subagent_update: clientCapabilities.subagents). Any other
// unstable-only kind on session/update is an error.
var gatedKinds = map[string]bool{"subagent_update": true}

// updateKinds reads the sessionUpdate values of a schema's
// SessionUpdate type.
func updateKinds(defs map[string]any) map[string]bool {
	kinds := map[string]bool{}
	su, _ := defs["SessionUpdate"].(map[string]any)
	variants, _ := su["oneOf"].([]any)
	for _, v := range variants {
		props, _ := v.(map[string]any)["properties"].(map[string]any)
		k, _ := props["sessionUpdate"].(map[string]any)
		if c, ok := k["const"].(string); ok {
			kinds[c] = true
		}
	}
	return kinds
}

// updateKind is the sessionUpdate value of a session/update message, ""
// for any other.
func updateKind(m map[string]any) string {
	params, _ := m["params"].(map[string]any)
	u, _ := params["update"].(map[string]any)
	k, _ := u["sessionUpdate"].(string)
	return k
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
