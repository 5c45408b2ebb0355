package toolstest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/dsh-acp/dsh-acp/tools"
)

// gen makes arguments and results from a tool's JSON Schema: values that
// mostly fit the schema (to reach the presenters' real code) and some that
// do not (to prove they are handled). It is deterministic for a seed.
type gen struct {
	rnd    *rand.Rand
	schema map[string]any
}

func newGen(params json.RawMessage, seed uint64) *gen {
	var schema map[string]any
	_ = json.Unmarshal(params, &schema) // a bad schema is reported by the schema check
	return &gen{rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), schema: schema}
}

var (
	stringPool = []string{
		"", "a", "hello world", "src/main.go", "/tmp/dsh-conformance/file.txt", "../outside.txt",
		"ünïcödé ✓ 🎉", "line1\nline2\n", "  ", "\x00", "null", "-1", "PATH", "a\r\nb",
		strings.Repeat("x", 3000),
	}
	numberPool = []any{0, 1, -1, 1.5, 3, 42, 99999, 2147483648, 1e300, -0.25, 0.0001}
)

func (g *gen) pick(n int) int { return g.rnd.IntN(n) }

// args returns one argument text: usually an object built from the schema,
// sometimes arbitrary JSON or broken text.
func (g *gen) args() json.RawMessage {
	switch r := g.pick(20); {
	case r == 0:
		return json.RawMessage(notObjects[g.pick(len(notObjects))])
	case r == 1:
		return json.RawMessage("")
	case r == 2:
		return g.marshal(g.junk(2))
	default:
		return g.marshal(g.fit(g.schema, 0))
	}
}

// fit returns a value that mostly fits schema s.
func (g *gen) fit(s map[string]any, depth int) any {
	if s == nil || depth > 4 || g.pick(20) == 0 {
		return g.junk(1)
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 && g.pick(8) != 0 {
		return enum[g.pick(len(enum))]
	}
	switch schemaType(s, g) {
	case "string":
		if g.pick(5) == 0 {
			return ""
		}
		return stringPool[g.pick(len(stringPool))]
	case "number":
		return numberPool[g.pick(len(numberPool))]
	case "integer":
		return []int{0, 1, -1, 7, 99999}[g.pick(5)]
	case "boolean":
		return g.pick(2) == 0
	case "null":
		return nil
	case "array":
		items, _ := s["items"].(map[string]any)
		n := g.pick(4)
		arr := make([]any, n)
		for i := range arr {
			arr[i] = g.fit(items, depth+1)
		}
		return arr
	case "object":
		obj := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		required := map[string]bool{}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok {
					required[name] = true
				}
			}
		}
		for _, name := range sortedKeys(props) {
			keep := g.pick(2) == 0
			if required[name] {
				keep = g.pick(20) != 0
			}
			if keep {
				ps, _ := props[name].(map[string]any)
				obj[name] = g.fit(ps, depth+1)
			}
		}
		if g.pick(10) == 0 {
			obj["extra_key"] = g.junk(1)
		}
		return obj
	}
	return g.junk(1)
}

// schemaType returns s's "type", choosing one when it is a list.
func schemaType(s map[string]any, g *gen) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		if len(t) > 0 {
			name, _ := t[g.pick(len(t))].(string)
			return name
		}
	}
	return ""
}

// junk returns an arbitrary JSON value.
func (g *gen) junk(depth int) any {
	n := 7
	if depth <= 0 {
		n = 5
	}
	switch g.pick(n) {
	case 0:
		return nil
	case 1:
		return g.pick(2) == 0
	case 2:
		return numberPool[g.pick(len(numberPool))]
	case 3, 4:
		return stringPool[g.pick(len(stringPool))]
	case 5:
		arr := make([]any, g.pick(3))
		for i := range arr {
			arr[i] = g.junk(depth - 1)
		}
		return arr
	default:
		obj := map[string]any{}
		for range g.pick(3) {
			obj[stringPool[g.pick(len(stringPool))]] = g.junk(depth - 1)
		}
		return obj
	}
}

// mutate returns a variant of sample: a key dropped, renamed to upper case,
// set to null, to junk or to the empty value of its type, or an extra key
// added, at a random depth.
func (g *gen) mutate(sample json.RawMessage) json.RawMessage {
	var v any
	if err := json.Unmarshal(sample, &v); err != nil {
		if len(sample) == 0 {
			return sample
		}
		return sample[:g.pick(len(sample))]
	}
	return g.marshal(g.mutateValue(v, 0))
}

func (g *gen) mutateValue(v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		keys := sortedKeys(x)
		out := make(map[string]any, len(x)+1)
		for k, val := range x {
			out[k] = val
		}
		if len(keys) == 0 || g.pick(6) == 0 {
			out[fmt.Sprintf("extra_%d", g.pick(100))] = g.junk(1)
			return out
		}
		k := keys[g.pick(len(keys))]
		switch g.pick(6) {
		case 0:
			delete(out, k)
		case 1:
			delete(out, k)
			out[strings.ToUpper(k)] = x[k]
		case 2:
			out[k] = nil
		case 3:
			out[k] = g.junk(1)
		case 4:
			out[k] = zeroLike(x[k])
		default:
			if depth < 4 {
				out[k] = g.mutateValue(x[k], depth+1)
			} else {
				out[k] = g.junk(0)
			}
		}
		return out
	case []any:
		out := slices.Clone(x)
		if len(out) == 0 || g.pick(4) == 0 {
			return append(out, g.junk(1))
		}
		i := g.pick(len(out))
		out[i] = g.mutateValue(out[i], depth+1)
		return out
	}
	return g.junk(1)
}

// zeroLike returns the empty value of v's JSON type: "", 0, false, [] or {}.
func zeroLike(v any) any {
	switch v.(type) {
	case string:
		return ""
	case float64:
		return 0
	case bool:
		return false
	case []any:
		return []any{}
	case map[string]any:
		return map[string]any{}
	}
	return nil
}

// invalidArgs returns argument texts that no schema-following tool can
// accept: {} when a property is required, and for each top-level property
// with a single declared type, the required properties plus that property
// set to a value of another JSON type.
func (g *gen) invalidArgs() []string {
	props, _ := g.schema["properties"].(map[string]any)
	req, _ := g.schema["required"].([]any)
	base := map[string]any{}
	for _, r := range req {
		name, _ := r.(string)
		ps, _ := props[name].(map[string]any)
		base[name] = g.fit(ps, 1)
	}
	var out []string
	if len(req) > 0 {
		out = append(out, "{}")
	}
	for _, name := range sortedKeys(props) {
		ps, _ := props[name].(map[string]any)
		t, _ := ps["type"].(string)
		wrong, ok := wrongValue(t)
		if !ok {
			continue
		}
		m := make(map[string]any, len(base)+1)
		for k, v := range base {
			m[k] = v
		}
		m[name] = wrong
		out = append(out, string(g.marshal(m)))
	}
	return out
}

// wrongValue returns a JSON value that is not of JSON Schema type t.
func wrongValue(t string) (any, bool) {
	switch t {
	case "string":
		return 12, true
	case "number", "integer":
		return "x", true
	case "boolean":
		return "yes", true
	case "object":
		return []any{1}, true
	case "array":
		return map[string]any{"x": 1}, true
	case "null":
		return 0, true
	}
	return nil, false
}

// resultInput returns a result as PresentResult may see it: live, replayed
// from an older version, or malformed.
func (g *gen) resultInput() tools.ResultInput {
	var r tools.ResultInput
	switch g.pick(6) {
	case 0:
		r.Content = nil
	case 1:
		r.Content = []tools.Content{}
	case 2:
		r.Content = []tools.Content{{Type: "image", Text: ""}}
	case 3:
		r.Content = []tools.Content{tools.Text("Error: something failed")}
	default:
		for range 1 + g.pick(3) {
			r.Content = append(r.Content, tools.Text(stringPool[g.pick(len(stringPool))]))
		}
	}
	r.IsError = g.pick(3) == 0
	metas := []string{"", "null", "{}", "[]", "0", `"s"`, `{"unknown":{"deep":[1,2]}}`}
	switch m := g.pick(len(metas) + 2); {
	case m < len(metas):
		if metas[m] != "" {
			r.Meta = json.RawMessage(metas[m])
		}
	default:
		r.Meta = g.marshal(g.junk(2))
	}
	return r
}

func (g *gen) marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
