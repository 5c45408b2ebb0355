package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file and one field of the registry's entry (and of Pending, which
// carries it to a call's resolution) are all that knows the validator of
// raw JSON-Schema tools (an MCP server's; Define tools never use it:
// Spec.Validate checks them with the spec's own messages). It is
// google/jsonschema-go, the library the MCP SDK already links to validate
// and infer its own schemas, so it adds no code to the binary and almost
// nothing to its start: its package init is about 0.2 ms, where the
// validator used before it (santhosh-tekuri/jsonschema/v6, which compiles
// five drafts' meta-schemas at init) cost about 5 ms of every
// spawn -> `initialize` and 2.3 MiB of RSS, measured through the binary.
// What that costs the model: a call is refused with the first violation
// the library finds, in its words with the schema location it names
// ("/properties/n: minimum: 0/1 is less than 1.000000"), not with every
// violation (with several, which one the library meets first follows its
// map order, so it may differ from call to call); the MCP server checks
// the arguments again in any case.

// rawSchema is a raw JSON-Schema tool's compiled parameters. For a
// schema that names a draft the library cannot validate (draft-04,
// draft-06, 2019-09) it is the empty schema: the call's arguments must
// be an object and go to the tool (the MCP server, which validates
// them) otherwise unchecked, rather than checked under another draft's
// rules.
type rawSchema = jsonschema.Resolved

// schemaHeader is what compileSchema reads of a schema before the
// library does: its draft and top-level type.
type schemaHeader struct {
	Schema string `json:"$schema"`
	Type   any    `json:"type"`
}

// compileSchema checks that params is a JSON object whose "type" is
// "object" and compiles it (draft 2020-12 unless $schema names draft-07).
// A schema that names another draft compiles to the empty schema (see
// rawSchema).
// External references are refused: compiling never touches files or the
// network. The error wraps the library's.
func compileSchema(name string, params []byte) (*rawSchema, error) {
	if !json.Valid(params) {
		return nil, fmt.Errorf("tools: tool %q: parameters are not JSON", name)
	}
	if t := bytes.TrimSpace(params); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("tools: tool %q: parameters must be a JSON object", name)
	}
	var h schemaHeader
	if err := json.Unmarshal(params, &h); err != nil {
		return nil, fmt.Errorf("tools: tool %q: parameters: %w", name, err)
	}
	if h.Type != "object" {
		return nil, fmt.Errorf(`tools: tool %q: parameters must have "type":"object"`, name)
	}
	var s jsonschema.Schema
	if !draftValidated(h.Schema) {
		return s.Resolve(nil)
	}
	if err := json.Unmarshal(params, &s); err != nil {
		return nil, fmt.Errorf("tools: tool %q: invalid parameters schema: %w", name, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("tools: tool %q: invalid parameters schema: %w", name, err)
	}
	return rs, nil
}

// draftValidated reports whether the library validates schemas whose
// $schema is uri: none (2020-12), draft-07 or 2020-12, with or without
// the trailing "#" and either scheme.
func draftValidated(uri string) bool {
	switch uri {
	case "",
		"http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#",
		"https://json-schema.org/draft/2020-12/schema":
		return true
	}
	return false
}

// schemaViolations validates v (a value from ParseArgs) with sch and
// returns the first violation the library finds, as its message. A
// non-object v gives only `"arguments" must be an object`. nil means
// valid.
func schemaViolations(sch *rawSchema, v any) []string {
	if _, ok := v.(map[string]any); !ok {
		return []string{msgNotObject}
	}
	if err := sch.Validate(plainNumbers(v)); err != nil {
		return []string{violationText(err.Error())}
	}
	return nil
}

// violationText is the library's message msg with its chain of
// "validating <schema location>: " prefixes cut to the innermost
// location: "validating root: validating /properties/n: type: ..."
// becomes "/properties/n: type: ...", and one about the whole arguments
// object keeps just its message.
func violationText(msg string) string {
	loc := ""
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		i := strings.Index(rest, ": ")
		if i < 0 {
			break
		}
		loc, msg = rest[:i], rest[i+2:]
	}
	if loc == "" || loc == "root" {
		return msg
	}
	return loc + ": " + msg
}

// plainNumbers is v (a value from ParseArgs) with each json.Number made
// an int64 when it is one and a float64 otherwise (±Inf past float64's
// range), which is how the library types numbers (a json.Number would be
// a string to it). Maps and slices are copied; v is not changed.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plainNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainNumbers(e)
		}
		return out
	}
	return v
}
