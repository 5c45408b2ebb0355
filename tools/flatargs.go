package tools

import (
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxFlatFields bounds the fields of a flat argument type, and the
// members of an arguments object that flatDecode reads.
const maxFlatFields = 16

// flatType is how arguments decode into a flat struct: one whose
// exported, JSON-visible fields all have a predeclared boolean, integer,
// float or string type, or a pointer to one (*float64 for an optional
// number), with no embedded struct, no ",string" option and no name
// used twice. Most tools' arguments are such a struct; decoding them
// needs no reflection over JSON, only a field set per member.
type flatType struct {
	fields map[string]flatField // by exact JSON name
}

// flatField is one field: its index in the struct, its kind, and
// whether it is a pointer to that kind.
type flatField struct {
	index int
	kind  reflect.Kind
	ptr   bool
}

// buildFlatType returns t's flatType, or nil when t is not flat.
func buildFlatType(t reflect.Type) *flatType {
	if t.Kind() != reflect.Struct || t.NumField() > maxFlatFields ||
		reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return nil
	}
	ft := &flatType{fields: map[string]flatField{}}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous || strings.Contains(","+opts+",", ",string,") {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		ff := flatField{index: i}
		typ := f.Type
		if typ.Kind() == reflect.Pointer {
			ff.ptr = true
			typ = typ.Elem()
		}
		if typ.PkgPath() != "" || typ.Name() != typ.Kind().String() {
			return nil // a named type: it may decode its own way
		}
		switch typ.Kind() {
		case reflect.Bool, reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			ff.kind = typ.Kind()
		default:
			return nil
		}
		if _, dup := ft.fields[name]; dup {
			return nil
		}
		ft.fields[name] = ff
	}
	return ft
}

// flatDecode is quickValid (valid) followed, when raw is valid, by the
// decoding of raw into dst, a settable zero value of the flat type ft:
// decoded reports that every member naming a field had a value that
// field takes as encoding/json takes it (null leaves a value field alone
// and sets a pointer to nil; numbers must fit the kind; strings are
// taken when their escapes are the one-letter ones and their text valid
// UTF-8). Not decoded means "decode another way" (dst may be partly
// set).
func flatDecode(dst reflect.Value, ft *flatType, raw []byte, spec []NamedProp, n *keyNode) (valid, decoded bool) {
	s := quickScanner{data: raw, capture: true}
	if !s.args(spec, n) {
		return false, false
	}
	if s.overflow {
		return true, false
	}
	for _, m := range s.top[:s.ntop] {
		f, ok := ft.fields[string(raw[m.key[0]:m.key[1]])]
		if !ok {
			continue
		}
		v := dst.Field(f.index)
		if m.kind == 'n' {
			if f.ptr {
				v.SetZero()
			}
			continue
		}
		if f.ptr {
			p := reflect.New(v.Type().Elem())
			v.Set(p)
			v = p.Elem()
		}
		text := raw[m.val[0]:m.val[1]]
		switch f.kind {
		case reflect.String:
			if m.kind != '"' {
				return true, false
			}
			str, ok := unquoteSimple(text, m.escaped)
			if !ok {
				return true, false
			}
			v.SetString(str)
		case reflect.Bool:
			if m.kind != 't' && m.kind != 'f' {
				return true, false
			}
			v.SetBool(m.kind == 't')
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if m.kind != '0' {
				return true, false
			}
			i, err := strconv.ParseInt(string(text), 10, 64)
			if err != nil || v.OverflowInt(i) {
				return true, false
			}
			v.SetInt(i)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if m.kind != '0' {
				return true, false
			}
			u, err := strconv.ParseUint(string(text), 10, 64)
			if err != nil || v.OverflowUint(u) {
				return true, false
			}
			v.SetUint(u)
		case reflect.Float32, reflect.Float64:
			if m.kind != '0' {
				return true, false
			}
			x, err := strconv.ParseFloat(string(text), v.Type().Bits())
			if err != nil || v.OverflowFloat(x) {
				return true, false
			}
			v.SetFloat(x)
		default:
			return true, false
		}
	}
	return true, true
}

// unquoteSimple returns the string a JSON string's contents (text,
// between the quotes, as quickValid accepted them) stand for, when its
// escapes are the one-letter ones and it is valid UTF-8; ok is false for
// \u escapes and invalid UTF-8 (which encoding/json replaces), left to
// encoding/json.
func unquoteSimple(text []byte, escaped bool) (string, bool) {
	if !utf8.Valid(text) {
		return "", false
	}
	if !escaped {
		return string(text), true
	}
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		switch text[i] {
		case '"', '\\', '/':
			b.WriteByte(text[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default:
			return "", false
		}
	}
	return b.String(), true
}
