package tools

import (
	"encoding/json"
	"slices"
	"strconv"
)

// msgNotObject is the violation for arguments that are not JSON or not a
// JSON object.
const msgNotObject = `"arguments" must be an object`

// Validate checks args (a value as decoded by encoding/json, or by ParseArgs)
// against s and returns the violation texts in declaration order, depth
// first; nil means valid. It never panics. The texts are:
//
//	"arguments" must be an object          (args is not a JSON object)
//	missing required property "<path>"     (a required key is absent)
//	"<path>" must be a string | a number | a boolean | an object | an array
//	"<path>" must be one of ["a","b"]      (checked after the type passes)
//
// Paths read a.b for nested keys and a[2] for array elements, e.g.
// servers[1].host. A JSON null never satisfies a type. Defaults are never
// applied and extra keys are allowed.
func (s Spec) Validate(args any) []string {
	obj, ok := args.(map[string]any)
	if !ok {
		return []string{msgNotObject}
	}
	return checkObject(nil, s, obj, "")
}

func checkObject(out []string, props []NamedProp, obj map[string]any, path string) []string {
	for _, np := range props {
		p := joinKey(path, np.Name)
		v, present := obj[np.Name]
		if !present {
			if np.Prop.Required {
				out = append(out, `missing required property "`+p+`"`)
			}
			continue
		}
		out = checkValue(out, np.Prop, v, p)
	}
	return out
}

func checkValue(out []string, pr Prop, v any, path string) []string {
	switch pr.Type {
	case TypeString:
		if _, ok := v.(string); !ok {
			return append(out, `"`+path+`" must be a string`)
		}
	case TypeNumber:
		if !isNumber(v) {
			return append(out, `"`+path+`" must be a number`)
		}
	case TypeBoolean:
		if _, ok := v.(bool); !ok {
			return append(out, `"`+path+`" must be a boolean`)
		}
	case TypeObject:
		obj, ok := v.(map[string]any)
		if !ok {
			return append(out, `"`+path+`" must be an object`)
		}
		if pr.Properties == nil {
			return out
		}
		return checkObject(out, pr.Properties, obj, path)
	case TypeArray:
		arr, ok := v.([]any)
		if !ok {
			return append(out, `"`+path+`" must be an array`)
		}
		if pr.Items == nil {
			return out
		}
		for i, el := range arr {
			out = checkValue(out, *pr.Items, el, path+"["+strconv.Itoa(i)+"]")
		}
		return out
	default:
		return append(out, `"`+path+`" has unsupported type "`+pr.Type+`"`)
	}
	if pr.Enum != nil {
		str, ok := v.(string)
		if !ok || !slices.Contains(pr.Enum, str) {
			return append(out, `"`+path+`" must be one of `+quoteList(pr.Enum))
		}
	}
	return out
}

// isNumber reports whether v is a JSON number as Go decoders represent it.
func isNumber(v any) bool {
	switch v.(type) {
	case float64, float32, json.Number,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}
