package tools

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// This file and one field of the registry's entry (and of Pending, which
// carries it to a call's resolution) are all that knows
// santhosh-tekuri/jsonschema/v6, the validator of raw JSON-Schema tools
// (Define tools never use it: Spec.Validate checks them). Linking it has
// a price at every start, whether or not a raw tool is ever registered:
// its package init compiles the meta-schemas of five drafts, measured
// (BenchmarkStartup) at about 5 ms of the spawn -> `initialize`
// time (9-10 ms against 4-5 ms without it; the stdlib-only floor is about
// 2 ms) and 2.3 MiB of RSS (9.9 against 7.6 MiB). The MCP SDK brings in
// google/jsonschema-go, which costs almost nothing at start-up but
// reports only the first violation, in its own words, takes json.Number
// (ParseArgs' numbers) for a string and accepts unknown type names:
// using it here would change every raw-tool message TestRawSchemaTool
// pins and the registration check for bad schemas.

// printer words the library's violation messages; message.Printer is safe
// for concurrent use.
var printer = message.NewPrinter(language.English)

// noLoader refuses every external schema: a tool's schema must be
// self-contained, and compiling it must never touch files or the network.
type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("tools: external schema %q not allowed", u)
}

// compileSchema checks that params is a JSON object whose "type" is
// "object" and compiles it with jsonschema (draft 2020-12 unless the schema
// names another). The error wraps the library's.
func compileSchema(name string, params []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return nil, fmt.Errorf("tools: tool %q: parameters are not JSON: %w", name, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("tools: tool %q: parameters must be a JSON object", name)
	}
	if obj["type"] != "object" {
		return nil, fmt.Errorf(`tools: tool %q: parameters must have "type":"object"`, name)
	}
	loc := "mem:///tools/" + url.PathEscape(name) + ".json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("tools: tool %q: %w", name, err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("tools: tool %q: invalid parameters schema: %w", name, err)
	}
	return sch, nil
}

// rawViolation is one leaf of the library's error tree.
type rawViolation struct {
	loc []string // instance location, JSON-pointer tokens
	arr []bool   // arr[i]: loc[i] indexes an array
	msg string
}

// schemaViolations validates v (a value from ParseArgs) with sch and returns
// the library's leaf messages as "<path>: <message>", sorted by instance
// path (array indexes numerically; the whole arguments object, shown as
// "arguments", first), in the library's order within one path. A non-object
// v gives only `"arguments" must be an object`. nil means valid.
func schemaViolations(sch *jsonschema.Schema, v any) []string {
	if _, ok := v.(map[string]any); !ok {
		return []string{msgNotObject}
	}
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var leaves []rawViolation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, rawViolation{
				loc: e.InstanceLocation,
				arr: arrayTokens(v, e.InstanceLocation),
				msg: e.ErrorKind.LocalizedString(printer),
			})
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.SortStableFunc(leaves, compareLoc)
	out := make([]string, len(leaves))
	for i, l := range leaves {
		out[i] = displayPath(l.loc, l.arr) + ": " + l.msg
	}
	return out
}

// arrayTokens reports, for each token of loc, whether it indexes an array in
// v.
func arrayTokens(v any, loc []string) []bool {
	arr := make([]bool, len(loc))
	for i, tok := range loc {
		switch x := v.(type) {
		case []any:
			arr[i] = true
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 || n >= len(x) {
				return arr
			}
			v = x[n]
		case map[string]any:
			v = x[tok]
		default:
			return arr
		}
	}
	return arr
}

func compareLoc(a, b rawViolation) int {
	for i := 0; i < len(a.loc) && i < len(b.loc); i++ {
		if a.arr[i] && b.arr[i] {
			ai, _ := strconv.Atoi(a.loc[i])
			bi, _ := strconv.Atoi(b.loc[i])
			if c := cmp.Compare(ai, bi); c != 0 {
				return c
			}
			continue
		}
		if c := strings.Compare(a.loc[i], b.loc[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a.loc), len(b.loc))
}

// displayPath renders an instance location like the spec messages do:
// a.b, a[2], servers[1].host; the empty location is "arguments".
func displayPath(loc []string, arr []bool) string {
	if len(loc) == 0 {
		return "arguments"
	}
	var b strings.Builder
	for i, tok := range loc {
		switch {
		case arr[i]:
			b.WriteString("[" + tok + "]")
		case i == 0:
			b.WriteString(tok)
		default:
			b.WriteString("." + tok)
		}
	}
	return b.String()
}
