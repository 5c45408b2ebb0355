package tools

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// scanPieces feeds pieces to a fresh scanner and returns Members after
// each piece, whether it changed, and Done at the end.
func scanPieces(pieces []string) (members []string, changed []bool, done bool) {
	var s ArgsScanner
	for _, p := range pieces {
		changed = append(changed, s.Write(p))
		members = append(members, string(s.Members()))
	}
	return members, changed, s.Done()
}

func TestArgsScannerMembersAsTheyComplete(t *testing.T) {
	pieces := []string{`{`, `"file`, `_path`, `": "`, `a b\"`, `.txt`, `"`, `, "n": 1`, `2`, ` , "o": {"x": ["}", `, `"]"]}`, `, "content": "long`, ` text"`, `}`, ` trailing`}
	members, changed, done := scanPieces(pieces)
	want := []string{`{}`, `{}`, `{}`, `{}`, `{}`, `{}`,
		`{"file_path":"a b\".txt"}`,
		`{"file_path":"a b\".txt"}`,
		`{"file_path":"a b\".txt"}`,
		`{"file_path":"a b\".txt","n":12}`,
		`{"file_path":"a b\".txt","n":12,"o":{"x": ["}", "]"]}}`,
		`{"file_path":"a b\".txt","n":12,"o":{"x": ["}", "]"]}}`,
		`{"file_path":"a b\".txt","n":12,"o":{"x": ["}", "]"]},"content":"long text"}`,
		`{"file_path":"a b\".txt","n":12,"o":{"x": ["}", "]"]},"content":"long text"}`,
		`{"file_path":"a b\".txt","n":12,"o":{"x": ["}", "]"]},"content":"long text"}`,
	}
	if !reflect.DeepEqual(members, want) {
		for i := range want {
			if i >= len(members) || members[i] != want[i] {
				t.Errorf("after piece %d %q: %s, want %s", i, pieces[i], members[i], want[i])
			}
		}
	}
	wantChanged := []bool{false, false, false, false, false, false, true, false, false, true, true, false, true, false, false}
	if !reflect.DeepEqual(changed, wantChanged) {
		t.Errorf("changed %v, want %v", changed, wantChanged)
	}
	if !done {
		t.Error("not done after the closing brace")
	}
}

// TestArgsScannerAnySplit: wherever the text breaks, the members after the
// last piece are those of the whole text, and they decode like it.
func TestArgsScannerAnySplit(t *testing.T) {
	texts := []string{
		`{"file_path": "src/__tests__/a_b_.js", "offset": 5, "limit": 20}`,
		`{"command":"printf '%s\n' \"}\" && echo \\\\","workdir":"sub dir","timeout":-1.5e3,"run_in_background":false}`,
		"{\n  \"a\" : null ,\n  \"b\":true,\"c\":[1,{\"d\":\"]}\"}],\"e\":\"日本\\u00e9\"\n}",
		`{}`,
		` { "k" : "v" } `,
	}
	for _, text := range texts {
		var whole map[string]any
		if err := json.Unmarshal([]byte(text), &whole); err != nil {
			t.Fatalf("bad test text %s: %v", text, err)
		}
		for cut := 0; cut <= len(text); cut++ {
			for cut2 := cut; cut2 <= len(text); cut2 += 7 {
				members, _, done := scanPieces([]string{text[:cut], text[cut:cut2], text[cut2:]})
				var got map[string]any
				if err := json.Unmarshal([]byte(members[2]), &got); err != nil || !reflect.DeepEqual(got, whole) || !done {
					t.Fatalf("split %d/%d of %s: members %s (%v), done %v", cut, cut2, text, members[2], err, done)
				}
			}
		}
	}
}

// TestArgsScannerPrefixes: every prefix gives only members that are
// really complete in it, with the values of the whole text.
func TestArgsScannerPrefixes(t *testing.T) {
	text := `{"file_path":"a.txt","offset":10,"limit":2,"x":{"y":[1,2]},"s":"q\"}"}`
	var whole map[string]json.RawMessage
	_ = json.Unmarshal([]byte(text), &whole)
	for n := 0; n <= len(text); n++ {
		var got map[string]json.RawMessage
		if err := json.Unmarshal(PartialArgs(text[:n]), &got); err != nil {
			t.Fatalf("prefix %q: %v", text[:n], err)
		}
		for k, v := range got {
			if string(whole[k]) != string(v) {
				t.Errorf("prefix %q: %s = %s, want %s", text[:n], k, v, whole[k])
			}
		}
		if n < len(`{"file_path":"a.txt"`) && got["file_path"] != nil {
			t.Errorf("prefix %q already has the path", text[:n])
		}
		if n >= len(`{"file_path":"a.txt"`) && got["file_path"] == nil {
			t.Errorf("prefix %q lacks the path", text[:n])
		}
		// A number is only complete at the delimiter after it.
		if strings.HasSuffix(text[:n], `"offset":1`) && got["offset"] != nil {
			t.Errorf("prefix %q has a cut number", text[:n])
		}
	}
}

func TestArgsScannerLimitsAndBadText(t *testing.T) {
	big := strings.Repeat("x", ArgsMemberLimit)
	members, _, done := scanPieces([]string{`{"file_path":"a","content":"`, big, big, `","n":1}`})
	if members[3] != `{"file_path":"a","n":1}` || !done {
		t.Errorf("a member over the limit: %s (done %v)", members[3], done)
	}
	for bad, want := range map[string]string{`[1]`: `{}`, `{"a" 1}`: `{}`, `{1:2}`: `{}`, `{"a":}`: `{}`, `x`: `{}`, `{"a":1 "b":2}`: `{"a":1}`} {
		// The scanner stops at the first byte that is not the object's:
		// nothing after it counts.
		if m, _, done := scanPieces([]string{bad, `,"z":1}`}); done || m[1] != want {
			t.Errorf("%s: members %v, done %v", bad, m, done)
		}
	}
	// An invalid value is left out, the rest goes on.
	if m, _, _ := scanPieces([]string{`{"a":tru,"b":"ok"}`}); m[0] != `{"b":"ok"}` {
		t.Errorf("invalid value: %s", m[0])
	}
}

// TestArgsScannerBoundedMembers: arguments of any number of members (a
// model that streams thousands, one per piece) keep the members bounded
// in count and in bytes, so the members, copied for every piece that
// completes one, cost a bounded amount per call instead of growing with
// the square of the arguments.
func TestArgsScannerBoundedMembers(t *testing.T) {
	var s ArgsScanner
	s.Write(`{"file_path":"a.txt",`)
	changes := 0
	for i := range 100000 {
		if s.Write(`"k` + strconv.Itoa(i) + `":0,`) {
			changes++
		}
	}
	if changes > ArgsMembersMax {
		t.Errorf("%d pieces completed a kept member, want at most %d", changes, ArgsMembersMax)
	}
	m := s.Members()
	if len(m) > ArgsMemberLimit+2 {
		t.Errorf("members hold %d bytes", len(m))
	}
	var got map[string]any
	if err := json.Unmarshal(m, &got); err != nil || got["file_path"] != "a.txt" || len(got) != ArgsMembersMax {
		t.Errorf("members %.200s: %v", m, err)
	}
	// Large members fill the bytes before the count.
	var b ArgsScanner
	big := strings.Repeat("x", ArgsMemberLimit/4)
	b.Write(`{"file_path":"a.txt"`)
	for i := range 10 {
		b.Write(`,"k` + strconv.Itoa(i) + `":"` + big + `"`)
	}
	if n := len(b.Members()); n > ArgsMemberLimit+2 {
		t.Errorf("large members hold %d bytes", n)
	}
	if !strings.HasPrefix(string(b.Members()), `{"file_path":"a.txt","k0":"`) {
		t.Errorf("members %.40s", b.Members())
	}
}

// topMembers counts the top-level members of a JSON object text, keys
// used twice included.
func topMembers(text string) int {
	dec := json.NewDecoder(strings.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() {
		var v json.RawMessage
		if _, err := dec.Token(); err != nil || dec.Decode(&v) != nil {
			return n
		}
		n++
	}
	return n
}

// FuzzArgsScanner: on any text split anywhere the scanner never panics,
// Members is always a JSON object, and on a valid object it holds the
// object's members.
func FuzzArgsScanner(f *testing.F) {
	f.Add(`{"file_path":"a.txt","content":"x\"y"}`, 5)
	f.Add(`{"a":[{"b":"]"}],"c":-1e5}`, 9)
	f.Add(`{"a":"\\"}`, 6)
	f.Fuzz(func(t *testing.T, text string, cut int) {
		if cut < 0 || cut > len(text) {
			cut = len(text) / 2
		}
		var s ArgsScanner
		s.Write(text[:cut])
		s.Write(text[cut:])
		var got map[string]any
		if err := json.Unmarshal(s.Members(), &got); err != nil {
			t.Fatalf("members %s: %v", s.Members(), err)
		}
		var whole map[string]any
		if json.Unmarshal([]byte(text), &whole) == nil && len(text) < ArgsMemberLimit && topMembers(text) <= ArgsMembersMax && strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "{") {
			if !reflect.DeepEqual(got, whole) {
				t.Fatalf("text %s: members %s", text, s.Members())
			}
		}
	})
}

// BenchmarkArgsScanner measures a 1 MiB write's arguments in 64-byte
// pieces (the content is seen through, not kept).
func BenchmarkArgsScanner(b *testing.B) {
	content := strings.Repeat("some text with \\\"quotes\\\" and \\\\ backslashes\\n", 1<<20/48)
	text := `{"file_path":"src/a.go","content":"` + content + `"}`
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		var s ArgsScanner
		for i := 0; i < len(text); i += 64 {
			s.Write(text[i:min(i+64, len(text))])
		}
		if !s.Done() {
			b.Fatal("not done")
		}
	}
}
