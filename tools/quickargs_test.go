package tools

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// quickCase is a Spec with the Go type its tool decodes into.
type quickCase struct {
	name  string
	spec  Spec
	check func(t *testing.T, raw string) (quick bool)
}

// serversArgs is the Go type of serversSpec's arguments; Extra and Meta
// are fields the Spec does not list (decoded, never validated).
type serversArgs struct {
	Name    string  `json:"name"`
	Count   float64 `json:"count"`
	Verbose bool    `json:"verbose"`
	Color   string  `json:"color"`
	Level   int     `json:"level"`
	Servers []struct {
		Host string   `json:"host"`
		Port int      `json:"port"`
		Tags []string `json:"tags"`
	} `json:"servers"`
	Opts *struct {
		Mode  string `json:"mode"`
		Inner struct {
			Deep bool `json:"deep"`
		} `json:"inner"`
	} `json:"opts"`
	Free  map[string]struct{ Key string } `json:"free"`
	List  []json.Number                   `json:"list"`
	Extra struct{ Sub string }            `json:"extra"`
	Meta  map[string][]struct{ ID int }   `json:"meta"`
}

// pathArgs is the one-string shape of most tools.
type pathArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
}

// flatArgs is a flat type (see flatType) with every kind it decodes.
type flatArgs struct {
	S        string   `json:"s"`
	B        bool     `json:"b"`
	I8       int8     `json:"i8"`
	U        uint     `json:"u"`
	F32      float32  `json:"f32"`
	P        *float64 `json:"p"`
	PS       *string  `json:"ps"`
	Untagged string
	Dash     string `json:"-"`
}

var flatSpec = Spec{
	{"s", Prop{Type: TypeString, Required: true}},
	{"b", Prop{Type: TypeBoolean}},
	{"i8", Prop{Type: TypeNumber}},
	{"u", Prop{Type: TypeNumber}},
	{"f32", Prop{Type: TypeNumber}},
	{"p", Prop{Type: TypeNumber}},
}

var pathSpec = Spec{
	{"path", Prop{Type: TypeString, Required: true}},
	{"offset", Prop{Type: TypeNumber}},
}

// agree checks quickValid on raw against the full path: when it is
// certain, the full path parses raw, finds no violation and drops no
// key; and whatever it says, Define's decoding (decodeArgs) gives the
// full path's value or error text. It returns quickValid's answer.
func agree[A any](t *testing.T, spec Spec, raw string) bool {
	t.Helper()
	node := buildKeyNode(reflect.TypeFor[A]())
	flat := buildFlatType(reflect.TypeFor[A]())
	quick := quickValid([]byte(raw), spec, node)
	if quick {
		parsed, err := ParseArgs(json.RawMessage(raw))
		if err != nil {
			t.Errorf("quickValid(%q) = true, but ParseArgs fails: %v", raw, err)
			return quick
		}
		if v := spec.Validate(parsed); v != nil {
			t.Errorf("quickValid(%q) = true, but Validate finds %q", raw, v)
		}
		if _, changed := dropFolded(parsed, node); changed {
			t.Errorf("quickValid(%q) = true, but dropFolded drops keys", raw)
		}
	}
	want, wantErr := decodeFull[A](json.RawMessage(raw), spec, node)
	got, err := decodeArgs[A](json.RawMessage(raw), spec, node, flat)
	if !reflect.DeepEqual(got, want) || errText(err) != errText(wantErr) {
		t.Errorf("decodeArgs(%q) = %+v, %v; the full path gives %+v, %v", raw, got, err, want, wantErr)
	}
	return quick
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

var quickCases = []quickCase{
	{"servers", serversSpec, func(t *testing.T, raw string) bool { return agree[serversArgs](t, serversSpec, raw) }},
	{"path", pathSpec, func(t *testing.T, raw string) bool { return agree[pathArgs](t, pathSpec, raw) }},
	{"path as map", pathSpec, func(t *testing.T, raw string) bool { return agree[map[string]any](t, pathSpec, raw) }},
	{"flat", flatSpec, func(t *testing.T, raw string) bool { return agree[flatArgs](t, flatSpec, raw) }},
	{"flat, no spec", nil, func(t *testing.T, raw string) bool { return agree[flatArgs](t, nil, raw) }},
}

// quickTexts are argument texts for the cases, valid and not.
var quickTexts = []string{
	`{"path":"a.txt"}`,
	` {"path" : "a.txt", "offset": 3}` + "\n",
	`{"path":"a.txt","offset":-1.5e3}`,
	`{"path":"a.txt","offset":1.5}`, // valid, but not into an int
	`{"path":"a\"b\\c\u00e9\n"}`,
	`{"path":"\xff"}`,
	`{"path":"a","extra":{"Sub":"x","sub":"y"}}`,
	`{"path":"a","PATH":"b"}`,
	`{"Path":"a"}`,
	`{"pa\u0074h":"a"}`,
	`{"path":"a","path":3}`,
	`{"path":3,"path":"a"}`,
	`{"path":"a","path":"b"}`,
	`{"path":null}`,
	`{"path":"a","offset":"3"}`,
	`{"path":"a","offset":01}`,
	`{"path":"a","offset":1.}`,
	`{"path":"a","offset":-}`,
	`{"path":"a",}`,
	`{"path":"a"} x`,
	`{"path":"a"}{}`,
	`{"path":"a"`,
	`{"path":"a	b"}`,
	`{"path":"\x"}`,
	`{"path":"\u12"}`,
	`{}`,
	``,
	`  `,
	`null`,
	`[]`,
	`"text"`,
	`{"name":"x","count":3,"color":"red","servers":[{"host":"a","port":80,"tags":["t1","t2"]},{"host":"b"}],"opts":{"mode":"fast","inner":{"deep":true}}}`,
	`{"name":"x","level":1}`,
	`{"name":"x","level":"1"}`,
	`{"name":"x","color":"blue"}`,
	`{"name":"x","color":"re\u0064"}`,
	`{"name":"x","servers":[{"host":"a"},7]}`,
	`{"name":"x","servers":[{"Host":"a"}]}`,
	`{"name":"x","servers":[{"host":"a","HOST":"b"}]}`,
	`{"name":"x","opts":{"mode":"safe","inner":{}}}`,
	`{"name":"x","opts":{"mode":"safe","inner":{"deep":false,"DEEP":true}}}`,
	`{"name":"x","free":{"k":{"Key":"v","key":"w"}}}`,
	`{"name":"x","free":{"k":{"KEY":"v"}}}`,
	`{"name":"x","free":[1,2]}`,
	`{"name":"x","list":[1,"a",null,{"b":[]}]}`,
	`{"name":"x","meta":{"a":[{"ID":1},{"id":2}]}}`,
	`{"name":"x","meta":{"a":[{"ID":1}]},"unknown":{"Name":"deep","name":[{"x":"y"}]}}`,
	`{"name":"x","verbose":true,"count":0}`,
	`{"name":"x","verbose":"true"}`,
	`{"name":"x","count":1e400}`,
	`{"s":"a\nb\t\"q\"\/\\","b":true,"i8":127,"u":3,"f32":1.5,"p":2,"ps":"x","Untagged":"z"}`,
	`{"s":"x","b":false,"i8":-128,"u":0,"f32":-0,"p":null,"ps":null}`,
	`{"s":"x","p":1,"p":null}`,
	`{"s":"x","p":null,"p":1e-3}`,
	`{"s":"x","i8":128}`,
	`{"s":"x","i8":1.0}`,
	`{"s":"x","i8":1e2}`,
	`{"s":"x","u":-1}`,
	`{"s":"x","u":18446744073709551616}`,
	`{"s":"x","f32":1e39}`,
	`{"s":"x","f32":3.4028235e38}`,
	`{"s":"\u0041\ud83d\ude00"}`,
	`{"s":"\ud83d"}`,
	`{"s":"caf\u00e9","ps":"\n"}`,
	`{"s":"été"}`,
	`{"s":null}`,
	`{"s":"x","s":null}`,
	`{"s":"x","ps":3}`,
	`{"s":"x","b":"true"}`,
	`{"s":"x","untagged":"z"}`,
	`{"s":"x","UNTAGGED":"z","Untagged":"y"}`,
	`{"s":"x","Dash":"z","-":"y"}`,
	`{"s":"x","S":"y"}`,
	`{"s":"x","b":true,"b":false,"extra":[1,{"s":"deep"}]}`,
	`{"path":"a","offset":1,"path":"b"}`,
	"{\"\x8b\":\"\",\"\x88\":0}", // both keys decode to U+FFFD: the same key
	"{\"path\":\"a\",\"\xff\":1}",
	`{"path":"a","pa\u0074h":"b"}`,
	`{"path":"a","x":{"k":1,"k":1}}`,
	`{"path":"a","x":[{"k":1},{"k":2,"j":3,"k":4}],"x":null}`,
	`{"name":"x","servers":[{"host":"a","port":1,"host":"b"}]}`,
	`{"name":"x","opts":{"mode":"safe","mode":"fast"}}`,
	`{"name":"x","free":{"k":{"Key":"v"},"k":{"Key":"w"}}}`,
	`{"s":"x","s":"y","b":true,"b":false}`,
	`{"s":"x","a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"a10":10,"a11":11,"a12":12,"a13":13,"a14":14,"a15":15,"a16":16,"u":5}`,
}

// TestQuickValid: quickValid is never wrong (whenever it is certain, the
// full path accepts the arguments and decodes the same value), and it is
// certain of the common valid arguments, so the fast path is taken.
func TestQuickValid(t *testing.T) {
	for _, c := range quickCases {
		for _, raw := range quickTexts {
			c.check(t, raw)
		}
	}
	node := buildKeyNode(reflect.TypeFor[pathArgs]())
	for _, raw := range []string{`{"path":"a.txt"}`, ` {"path" : "a.txt", "offset": 3}` + "\n", `{"path":"a\"b\\c\u00e9\n"}`, `{"path":"a","x":[{"y":null},{"y":1}]}`, `{"path":"a","x":{"path":1}}`} {
		if !quickValid([]byte(raw), pathSpec, node) {
			t.Errorf("quickValid(%q) = false, want true", raw)
		}
	}
	// A key given twice, at any depth, is the full path's to refuse.
	for _, raw := range []string{`{"path":"a","path":"b"}`, `{"path":"a","x":{"y":1,"z":2,"y":3}}`, `{"path":"a","x":[{"y":1},{"y":2,"y":2}]}`} {
		if quickValid([]byte(raw), pathSpec, node) {
			t.Errorf("quickValid(%q) = true, want false (a duplicate key)", raw)
		}
	}
	flat := buildFlatType(reflect.TypeFor[flatArgs]())
	if flat == nil || buildFlatType(reflect.TypeFor[pathArgs]()) == nil || buildFlatType(reflect.TypeFor[serversArgs]()) != nil {
		t.Fatalf("flat types: flatArgs %v, pathArgs %v, serversArgs %v; want flat, flat, not flat",
			flat != nil, buildFlatType(reflect.TypeFor[pathArgs]()) != nil, buildFlatType(reflect.TypeFor[serversArgs]()) != nil)
	}
	var fa flatArgs
	raw := []byte(`{"s":"a\nb","b":true,"i8":-3,"u":7,"f32":0.5,"p":2.5,"ps":"y","Untagged":"z"}`)
	if valid, decoded := flatDecode(reflect.ValueOf(&fa).Elem(), flat, raw, flatSpec, buildKeyNode(reflect.TypeFor[flatArgs]())); !valid || !decoded ||
		fa.S != "a\nb" || !fa.B || fa.I8 != -3 || fa.U != 7 || fa.F32 != 0.5 || fa.P == nil || *fa.P != 2.5 || fa.PS == nil || *fa.PS != "y" || fa.Untagged != "z" {
		t.Errorf("flatDecode(%s) = %v, %v, %+v", raw, valid, decoded, fa)
	}
	node = buildKeyNode(reflect.TypeFor[serversArgs]())
	if raw := quickTexts[31]; !quickValid([]byte(raw), serversSpec, node) {
		t.Errorf("quickValid(%q) = false, want true", raw)
	}
}

// TestQuickValidMutations runs the agreement check on many variations of
// the texts above (bytes inserted, dropped, replaced, keys recased), and
// checks that a fair share is still taken by the fast path.
func TestQuickValidMutations(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 17))
	const alphabet = `{}[]:,"\ 0123456789.-+eEtrufalsnPATHpathnamehostHOSTu00e9` + "\t\n\xff"
	mutate := func(s string) string {
		b := []byte(s)
		for range 1 + r.IntN(3) {
			switch r.IntN(4) {
			case 0: // insert
				i := r.IntN(len(b) + 1)
				b = append(b[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
			case 1: // drop
				if len(b) > 0 {
					i := r.IntN(len(b))
					b = append(b[:i], b[i+1:]...)
				}
			case 2: // replace
				if len(b) > 0 {
					b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
				}
			case 3: // recase a key
				s := string(b)
				for _, k := range []string{`"path"`, `"host"`, `"deep"`, `"name"`, `"Key"`} {
					if strings.Contains(s, k) && r.IntN(2) == 0 {
						s = strings.Replace(s, k, strings.ToUpper(k), 1)
					}
				}
				b = []byte(s)
			}
		}
		return string(b)
	}
	quick, total := 0, 0
	for _, c := range quickCases {
		for range 4000 {
			raw := mutate(quickTexts[r.IntN(len(quickTexts))])
			total++
			if c.check(t, raw) {
				quick++
			}
		}
	}
	if quick < total/50 {
		t.Errorf("the fast path took %d of %d mutated texts, want at least %d", quick, total, total/50)
	}
	t.Logf("fast path: %d of %d", quick, total)
}

// FuzzQuickValid is TestQuickValid's check on fuzzed texts (run with
// -fuzz=FuzzQuickValid).
func FuzzQuickValid(f *testing.F) {
	for _, raw := range quickTexts {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, c := range quickCases {
			c.check(t, raw)
		}
	})
}
