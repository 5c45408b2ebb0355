package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

type cacheArgs struct {
	Path  string   `json:"path"`
	Line  *int     `json:"line"`
	Tags  []string `json:"tags"`
	Force bool     `json:"force"`
}

var cacheSpec = Spec{
	{Name: "path", Prop: Prop{Type: TypeString, Required: true}},
	{Name: "line", Prop: Prop{Type: TypeNumber}},
	{Name: "tags", Prop: Prop{Type: TypeArray, Items: &Prop{Type: TypeString}}},
	{Name: "force", Prop: Prop{Type: TypeBoolean}},
}

// seen is what a test presenter saw: a deep copy of its arguments.
type seen struct {
	Path  string
	Line  int
	Lined bool
	Tags  []string
	Force bool
}

func see(a cacheArgs) seen {
	s := seen{Path: a.Path, Tags: append([]string(nil), a.Tags...), Force: a.Force}
	if a.Line != nil {
		s.Line, s.Lined = *a.Line, true
	}
	return s
}

// cacheTool returns a tool whose presenters report what they saw (in the
// titles, as JSON) and then scribble over their arguments.
func cacheTool() Tool {
	scribble := func(a cacheArgs) {
		if a.Line != nil {
			*a.Line = -1
		}
		for i := range a.Tags {
			a.Tags[i] = "scribbled"
		}
	}
	title := func(a cacheArgs) string {
		b, _ := json.Marshal(see(a))
		return string(b)
	}
	return Define(Def[cacheArgs]{
		Name: "cached", Spec: cacheSpec,
		PresentCall: func(a cacheArgs) ToolCallView {
			t := title(a)
			scribble(a)
			return GenericCall{Title: t}
		},
		PresentResult: func(a cacheArgs, _ ResultInput) ToolResultView {
			t := title(a)
			scribble(a)
			return GenericResult{Title: t}
		},
	})
}

var cacheRaws = []string{
	`{"path":"a.go","line":3,"tags":["x","y"]}`,
	`{"path": "a.go", "line": 3, "tags": ["x","y"]}`,
	`{"path":"b.go","force":true,"tags":[]}`,
	`{"path":"c.go","line":1.5}`,
	`{"PATH":"folded"}`,
	`{"path":"d.go","tags":null}`,
	`not json`,
	``,
	`{"path":7}`,
}

// uncached decodes raw the way Define does, without any cache.
func uncached(raw string) (seen, bool) {
	parsed, err := ParseArgs(json.RawMessage(raw))
	if err != nil || len(cacheSpec.Validate(parsed)) > 0 {
		return seen{}, false
	}
	var a cacheArgs
	if decodeInto(&a, json.RawMessage(raw), parsed, buildKeyNode(reflect.TypeFor[cacheArgs]())) != nil {
		return seen{}, false
	}
	return see(a), true
}

func titleOf(t *testing.T, v any) (seen, bool) {
	t.Helper()
	var title string
	switch v := v.(type) {
	case nil:
		return seen{}, false
	case GenericCall:
		title = v.Title
	case GenericResult:
		title = v.Title
	default:
		t.Fatalf("unexpected view %#v", v)
	}
	var s seen
	if err := json.Unmarshal([]byte(title), &s); err != nil {
		t.Fatal(err)
	}
	return s, true
}

// TestPresentersShareDecodedArgs: with the cache, every presenter call
// sees exactly what a fresh decode gives, also after an earlier presenter
// scribbled over its (pointer and slice) arguments, and also for
// arguments that fail to decode.
func TestPresentersShareDecodedArgs(t *testing.T) {
	tool := cacheTool()
	for round := range 3 {
		for _, raw := range cacheRaws {
			want, wantOK := uncached(raw)
			for i := range 2 {
				var v any = tool.CallView(json.RawMessage(raw))
				if i == 1 {
					v = tool.ResultView(json.RawMessage(raw), ResultInput{})
				}
				got, ok := titleOf(t, v)
				if ok != wantOK || !reflect.DeepEqual(got, want) {
					t.Errorf("round %d, %s, presenter %d: saw %+v (%v), want %+v (%v)", round, raw, i, got, ok, want, wantOK)
				}
			}
		}
	}
}

// TestPresentersConcurrent: presenters of one tool called from many
// goroutines (run with -race) still each see a fresh decode.
func TestPresentersConcurrent(t *testing.T) {
	tool := cacheTool()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				raw := fmt.Sprintf(`{"path":"f%d.go","line":%d,"tags":["t"]}`, (i+g)%11, i%3)
				want, _ := uncached(raw)
				got, ok := titleOf(t, tool.CallView(json.RawMessage(raw)))
				got2, ok2 := titleOf(t, tool.ResultView(json.RawMessage(raw), ResultInput{}))
				if !ok || !ok2 || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got2, want) {
					t.Errorf("%s: saw %+v and %+v, want %+v", raw, got, got2, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestArgsCacheBounds: the cache keeps the newest argsCacheEntries
// entries, by exact bytes, and never a key over argsCacheMaxKey bytes.
func TestArgsCacheBounds(t *testing.T) {
	c := newArgsCache[cacheArgs]()
	if c == nil || !c.deep {
		t.Fatalf("cacheArgs: cache %v, want a deep-copying cache", c)
	}
	key := func(i int) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"path":"%d"}`, i)) }
	for i := range argsCacheEntries + 1 {
		c.put(key(i), cacheArgs{Path: fmt.Sprint(i)}, true)
	}
	if _, _, hit := c.get(key(0)); hit {
		t.Error("the oldest entry was not replaced")
	}
	for i := 1; i <= argsCacheEntries; i++ {
		a, ok, hit := c.get(key(i))
		if !hit || !ok || a.Path != fmt.Sprint(i) {
			t.Errorf("entry %d: %+v ok=%v hit=%v", i, a, ok, hit)
		}
	}
	if _, _, hit := c.get(json.RawMessage(`{"path":"1"} `)); hit {
		t.Error("a key differing by a space hit")
	}
	big := json.RawMessage(`{"path":"` + strings.Repeat("x", argsCacheMaxKey) + `"}`)
	c.put(big, cacheArgs{}, true)
	if _, _, hit := c.get(big); hit {
		t.Error("a key over the size bound was kept")
	}
}

type withUnmarshaler struct{ S string }

func (w *withUnmarshaler) UnmarshalJSON([]byte) error { return nil }

type textish string

func (t *textish) UnmarshalText([]byte) error { return nil }

// TestArgsCacheTypes: only types that can be copied exactly are cached.
func TestArgsCacheTypes(t *testing.T) {
	type flat struct {
		A string
		B [2]int
		N json.Number
		//lint:ignore U1000 never set or read on purpose: the case is a struct with an unexported field that holds no references
		x int
	}
	type node struct {
		Name string
		Kids []*node
	}
	check := func(name string, c any, wantNil, wantDeep bool) {
		t.Helper()
		v := reflect.ValueOf(c)
		if v.IsNil() != wantNil {
			t.Errorf("%s: nil = %v, want %v", name, v.IsNil(), wantNil)
			return
		}
		if !wantNil {
			if deep := v.Elem().FieldByName("deep").Bool(); deep != wantDeep {
				t.Errorf("%s: deep = %v, want %v", name, deep, wantDeep)
			}
		}
	}
	check("flat", newArgsCache[flat](), false, false)
	check("pointers", newArgsCache[cacheArgs](), false, true)
	check("recursive", newArgsCache[node](), false, true)
	check("map", newArgsCache[struct{ M map[string]string }](), true, false)
	check("interface", newArgsCache[struct{ V any }](), true, false)
	check("unmarshaler", newArgsCache[struct{ W withUnmarshaler }](), true, false)
	check("text unmarshaler", newArgsCache[struct{ T textish }](), true, false)
	check("unexported pointer", newArgsCache[struct{ p *int }](), true, false)

	c := newArgsCache[node]()
	orig := node{Name: "root", Kids: []*node{{Name: "kid", Kids: []*node{}}}}
	cp := c.clone(orig)
	cp.Kids[0].Name = "changed"
	cp.Kids[0].Kids = append(cp.Kids[0].Kids, nil)
	if orig.Kids[0].Name != "kid" || len(orig.Kids[0].Kids) != 0 || orig.Kids[0].Kids == nil {
		t.Errorf("clone shares memory with the original: %+v", orig.Kids[0])
	}
}
