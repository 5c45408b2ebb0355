package acp

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/acptest"
)

// trickyStrings exercise every escaping rule: HTML bytes, quotes and
// backslashes, control bytes, U+2028/2029, invalid and truncated UTF-8.
var trickyStrings = []string{
	"", "a", "<a&b>", `quote"back\slash`, "\x00\x01\x1f\x7f", "\b\f\n\r\t", "\u2028\u2029",
	"\xff\xfe", "é日本🙂", "\xe2\x80", "\xe2\x80\xa8x\xe2\x80\xa9", "/proj/a b.go", "text with\nnewline",
	"\xed\xa0\x80", "\xf4\x90\x80\x80",
}

// trickyRaws are valid raw JSON fields with whitespace and bytes to
// escape inside strings.
var trickyRaws = []string{
	"{}", ` { "a" : [1, 2 ,"<x>&"] } `, "\"\u2028\u2029\"", `"a\"<b\\"`, "null", " 12 ",
	"{\n\t\"k\": {\"n\": true}\r\n}", `[]`, `"\u003c"`,
}

// gen builds random updates from a seeded source plus fuzz-supplied text.
type gen struct {
	r     *rand.Rand
	extra []string
}

func (g *gen) str() string {
	if len(g.extra) > 0 && g.r.IntN(3) == 0 {
		return g.extra[g.r.IntN(len(g.extra))]
	}
	if g.r.IntN(4) == 0 {
		const alphabet = "a<>&\"\\\x00\x1f\n\xe2\x80\xa8\xa9\xff\xc3\xa9 "
		b := make([]byte, g.r.IntN(10))
		for i := range b {
			b[i] = alphabet[g.r.IntN(len(alphabet))]
		}
		return string(b)
	}
	return trickyStrings[g.r.IntN(len(trickyStrings))]
}

// id is a non-empty string (for required ids, which are never empty).
func (g *gen) id() string {
	if s := g.str(); s != "" {
		return s
	}
	return "id"
}

// metaRaw is a random `_meta` object (or none).
func (g *gen) metaRaw() json.RawMessage {
	switch g.r.IntN(3) {
	case 0:
		return nil
	case 1:
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(` { "a" : [1, 2 ,"<x>&"], "b": "\u2028" } `)
}

func (g *gen) maybeStr() string {
	if g.r.IntN(2) == 0 {
		return ""
	}
	return g.str()
}

func (g *gen) strPtr() *string {
	if g.r.IntN(2) == 0 {
		return nil
	}
	s := g.str()
	return &s
}

func (g *gen) intPtr() *int {
	if g.r.IntN(2) == 0 {
		return nil
	}
	n := g.r.IntN(2000)
	return &n
}

func (g *gen) raw() json.RawMessage {
	if g.r.IntN(2) == 0 {
		return nil
	}
	return json.RawMessage(trickyRaws[g.r.IntN(len(trickyRaws))])
}

// block is a content block; legacy leaves out what the old struct could
// not hold (annotations).
func (g *gen) block(legacy bool) ContentBlock {
	types := []string{BlockText, BlockText, BlockImage, BlockResourceLink, BlockResource, "", BlockAudio}
	b := ContentBlock{Type: types[g.r.IntN(len(types))], Text: g.maybeStr(), Data: g.maybeStr(), MimeType: g.maybeStr(),
		URI: g.maybeStr(), Name: g.maybeStr(), Title: g.maybeStr(), Description: g.maybeStr(), Meta: g.metaRaw()}
	if g.r.IntN(2) == 0 {
		n := g.r.Int64() - 1<<62
		b.Size = &n
	}
	if g.r.IntN(2) == 0 {
		b.Resource = &EmbeddedResource{URI: g.str(), Text: g.maybeStr(), Blob: g.maybeStr(), MimeType: g.maybeStr()}
	}
	if !legacy && g.r.IntN(2) == 0 {
		p := 0.5
		b.Annotations = &Annotations{Audience: []string{"user"}, LastModified: g.maybeStr(), Priority: &p}
	}
	return b
}

func (g *gen) items() []ToolCallContent {
	if g.r.IntN(3) == 0 {
		return nil
	}
	out := []ToolCallContent{}
	for range g.r.IntN(4) {
		switch g.r.IntN(3) {
		case 0:
			out = append(out, Content{Content: g.block(true)})
		case 1:
			out = append(out, Diff{Path: g.str(), OldText: g.strPtr(), NewText: g.str()})
		default:
			out = append(out, Terminal{TerminalID: g.str()})
		}
	}
	return out
}

func (g *gen) locations() []ToolCallLocation {
	if g.r.IntN(2) == 0 {
		return nil
	}
	out := []ToolCallLocation{}
	for range g.r.IntN(3) {
		out = append(out, ToolCallLocation{Path: g.str(), Line: g.intPtr()})
	}
	return out
}

func (g *gen) meta() *ToolCallMeta {
	if g.r.IntN(2) == 0 {
		return nil
	}
	m := &ToolCallMeta{}
	if g.r.IntN(2) == 0 {
		m.TerminalInfo = &TerminalInfo{TerminalID: g.str(), Cwd: g.maybeStr()}
	}
	if g.r.IntN(2) == 0 {
		m.TerminalOutput = &TerminalOutput{TerminalID: g.str(), Data: g.maybeStr()}
	}
	if g.r.IntN(2) == 0 {
		m.TerminalExit = &TerminalExit{TerminalID: g.str(), ExitCode: g.intPtr(), Signal: g.strPtr()}
	}
	return m
}

// update returns a random update of one of the kinds the old
// one-struct SessionUpdate could express (legacy: only the fields it
// had), or of any kind with every field (not legacy).
func (g *gen) update(legacy bool) Update {
	n := 9
	if !legacy {
		n = 14
	}
	chunk := func() ContentChunk {
		c := ContentChunk{Content: g.block(legacy)}
		if !legacy {
			c.MessageID, c.Meta = g.maybeStr(), g.metaRaw()
		}
		return c
	}
	switch g.r.IntN(n) {
	case 0:
		return UserMessageChunk(chunk())
	case 1:
		return AgentMessageChunk(chunk())
	case 2:
		return AgentThoughtChunk(chunk())
	case 3:
		u := ToolCall{ToolCallID: g.id(), Title: g.str(), Kind: ToolKind(g.maybeStr()), Status: ToolCallStatus(g.maybeStr()),
			Locations: g.locations(), RawInput: g.raw(), RawOutput: g.raw(), Meta: g.meta(), Content: g.items()}
		if !legacy {
			u.Name = g.maybeStr()
		}
		return u
	case 4:
		u := ToolCallUpdate{ToolCallID: g.id(), Title: g.strPtr(), Kind: ToolKind(g.maybeStr()), Status: ToolCallStatus(g.maybeStr()),
			Locations: g.locations(), RawInput: g.raw(), RawOutput: g.raw(), Meta: g.meta(), Content: g.items()}
		if !legacy {
			u.Name = g.strPtr()
		}
		return u
	case 5:
		u := Plan{Entries: []PlanEntry{}}
		for range g.r.IntN(3) {
			u.Entries = append(u.Entries, PlanEntry{Content: g.str(), Priority: g.str(), Status: g.str()})
		}
		return u
	case 6:
		u := AvailableCommandsUpdate{AvailableCommands: []AvailableCommand{}}
		for range g.r.IntN(3) {
			c := AvailableCommand{Name: g.str(), Description: g.str()}
			if !legacy && g.r.IntN(2) == 0 {
				c.Input = &UnstructuredInputHint{Hint: g.str()}
			}
			u.AvailableCommands = append(u.AvailableCommands, c)
		}
		return u
	case 7:
		return CurrentModeUpdate{CurrentModeID: g.id()}
	case 8:
		u := SessionInfoUpdate{Title: g.strPtr()}
		if !legacy {
			u.UpdatedAt = g.maybeStr()
		}
		return u
	case 9:
		return ConfigOptionUpdate{ConfigOptions: []SessionConfigOption{
			{ID: g.str(), Name: g.str(), Category: g.maybeStr(), Select: &SessionConfigSelect{CurrentValue: g.str(),
				Options: []SessionConfigSelectOption{{Value: g.str(), Name: g.str(), Description: g.maybeStr()}}}},
			{ID: g.str(), Name: g.str(), Boolean: &SessionConfigBoolean{CurrentValue: g.r.IntN(2) == 0}},
			{ID: g.str(), Name: g.str(), Select: &SessionConfigSelect{CurrentValue: g.str(),
				Groups: []SessionConfigSelectGroup{{Group: g.str(), Name: g.str(), Options: []SessionConfigSelectOption{{Value: g.str(), Name: g.str()}}}}}},
		}}
	case 10:
		u := UsageUpdate{Used: g.r.Uint64N(1 << 40), Size: g.r.Uint64N(1 << 40)}
		if g.r.IntN(2) == 0 {
			u.Cost = &Cost{Amount: float64(g.r.IntN(10000)) / 100, Currency: "USD"}
		}
		return u
	case 11:
		return Notice{Severity: NoticeWarning, Title: g.id(), Description: g.maybeStr()}
	case 12:
		u := CompactionUpdate{CompactionID: g.str(), Status: CompactionCompleted, Error: g.strPtr()}
		if g.r.IntN(2) == 0 {
			u.Summary = []ContentBlock{TextBlock(g.str())}
		}
		return u
	default:
		return CompactionSummaryChunk{CompactionID: g.str(), Content: g.block(false)}
	}
}

// mustMarshalUpdate is MarshalUpdate, failing the test on error.
func mustMarshalUpdate(t testing.TB, u Update) []byte {
	t.Helper()
	b, err := MarshalUpdate(u)
	if err != nil {
		t.Fatalf("MarshalUpdate(%#v): %v", u, err)
	}
	return b
}

// TestUpdatesKeepTheLegacyWire: the variants, through encoding/json, write
// exactly the bytes the old one-struct SessionUpdate wrote (its
// reflective reference encoder, which the hand-written encoder matched
// and the golden transcripts were recorded with), for random values with
// tricky strings and raw fields, on every path: MarshalUpdate, json.Marshal
// of the notification, and Conn.Notify's line.
func TestUpdatesKeepTheLegacyWire(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(1, 2))}
	kinds := map[string]int{}
	for i := range 5000 {
		u := g.update(true)
		kinds[u.SessionUpdateKind()]++
		want, err := json.Marshal(legacyOf(u))
		if err != nil {
			t.Fatalf("reference: %v", err)
		}
		if got := mustMarshalUpdate(t, u); !bytes.Equal(got, want) {
			t.Fatalf("update %d (%s)\n got %s\nwant %s", i, u.SessionUpdateKind(), got, want)
		}
		sid := "sess-1"
		if i%7 == 0 {
			sid = g.str()
		}
		wantN, _ := json.Marshal(refSessionNotification{sid, legacyOf(u)})
		gotN, err := json.Marshal(SessionNotification{SessionID: sid, Update: u})
		if err != nil || !bytes.Equal(gotN, wantN) {
			t.Fatalf("notification: %v\n got %s\nwant %s", err, gotN, wantN)
		}
	}
	if len(kinds) != 9 {
		t.Errorf("the generator covered %d legacy kinds, want 9: %v", len(kinds), kinds)
	}
}

// TestUpdateRoundTrip: every kind decodes back (UnmarshalUpdate, and
// SessionNotification.UnmarshalJSON) to the same variant, which encodes
// to the same bytes.
func TestUpdateRoundTrip(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(3, 4))}
	kinds := map[string]bool{}
	for range 3000 {
		u := g.update(false)
		kinds[u.SessionUpdateKind()] = true
		b := mustMarshalUpdate(t, u)
		back, err := UnmarshalUpdate(b)
		if err != nil {
			t.Fatalf("UnmarshalUpdate(%s): %v", b, err)
		}
		if reflect.TypeOf(back) != reflect.TypeOf(u) {
			t.Fatalf("decoded %T, want %T", back, u)
		}
		// Invalid UTF-8 comes back as U+FFFD, written unescaped: compare
		// the JSON values, then the bytes of a second round.
		again := mustMarshalUpdate(t, back)
		var was, now any
		if json.Unmarshal(b, &was) != nil || json.Unmarshal(again, &now) != nil || !reflect.DeepEqual(was, now) {
			t.Fatalf("round trip changed the update\n was %s\n now %s", b, again)
		}
		if back2, err := UnmarshalUpdate(again); err != nil || !bytes.Equal(mustMarshalUpdate(t, back2), again) {
			t.Fatalf("second round trip: %v\n%s", err, again)
		}
		var n SessionNotification
		line, _ := json.Marshal(SessionNotification{SessionID: "s", Update: u, Meta: json.RawMessage(`{"k":1}`)})
		if err := json.Unmarshal(line, &n); err != nil || n.SessionID != "s" || string(n.Meta) != `{"k":1}` ||
			reflect.TypeOf(n.Update) != reflect.TypeOf(u) {
			t.Fatalf("notification round trip: %v, %+v", err, n)
		}
	}
	if len(kinds) != len(updateDecoders) {
		t.Errorf("covered %d kinds, want %d", len(kinds), len(updateDecoders))
	}
	for _, bad := range []string{`{}`, `{"sessionUpdate":"fly"}`, `{"sessionUpdate":"plan","entries":3}`, `[]`} {
		if u, err := UnmarshalUpdate([]byte(bad)); err == nil {
			t.Errorf("UnmarshalUpdate(%s) = %#v, want an error", bad, u)
		}
	}
}

// TestUpdateKindsMatchSchema: the closed set is the schema's: one
// variant per sessionUpdate value of the SDK's stable schema, each
// reporting its own kind.
func TestUpdateKindsMatchSchema(t *testing.T) {
	data, err := os.ReadFile(sdkSchemaPath(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs struct {
			SessionUpdate struct {
				OneOf []struct {
					Properties struct {
						SessionUpdate struct {
							Const string `json:"const"`
						} `json:"sessionUpdate"`
					} `json:"properties"`
				} `json:"oneOf"`
			} `json:"SessionUpdate"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var schema, ours []string
	for _, v := range doc.Defs.SessionUpdate.OneOf {
		schema = append(schema, v.Properties.SessionUpdate.Const)
	}
	for kind, dec := range updateDecoders {
		ours = append(ours, kind)
		u, err := dec([]byte(`{}`))
		if err != nil || u.SessionUpdateKind() != kind {
			t.Errorf("the decoder of %q gives %T (%v)", kind, u, err)
		}
	}
	sort.Strings(schema)
	sort.Strings(ours)
	if !slices.Equal(schema, ours) || len(schema) < 14 {
		t.Errorf("update kinds\n ours   %v\n schema %v", ours, schema)
	}
}

// sdkSchemaPath is the SDK's stable schema (acptest.SchemaDir fails the
// test, saying how to install it, when it is missing).
func sdkSchemaPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(acptest.SchemaDir(t), "schema.json")
}

// TestUpdateVariantsMatchSchema: random updates of every kind, with valid
// enum values and content blocks, are valid session/update notifications.
func TestUpdateVariantsMatchSchema(t *testing.T) {
	v := acptest.Load(t)
	g := &gen{r: rand.New(rand.NewPCG(9, 9))}
	for range 400 {
		u := g.update(false)
		switch x := u.(type) {
		case ToolCall:
			x.Kind, x.Status = "edit", StatusPending
			u = x
		case ToolCallUpdate:
			x.Kind, x.Status = "", StatusCompleted
			u = x
		case Plan:
			for i := range x.Entries {
				x.Entries[i].Priority, x.Entries[i].Status = "low", "pending"
			}
		default:
			// The other kinds have no enum field the generator fills
			// at random.
		}
		u = validBlocks(u)
		b, err := json.Marshal(envelope{"2.0", MethodSessionUpdate, SessionNotification{SessionID: "s", Update: u}})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Validate(b, ""); err != nil {
			t.Errorf("%s: %v\n%s", u.SessionUpdateKind(), err, b)
		}
	}
}

// validBlocks replaces the random content blocks of u (whose fields need
// not fit their type) by valid text blocks.
func validBlocks(u Update) Update {
	fix := func(items []ToolCallContent) []ToolCallContent {
		for i := range items {
			if _, ok := items[i].(Content); ok {
				items[i] = TextContent("x")
			}
		}
		return items
	}
	switch x := u.(type) {
	case UserMessageChunk:
		x.Content = TextBlock("x")
		return x
	case AgentMessageChunk:
		x.Content = TextBlock("x")
		return x
	case AgentThoughtChunk:
		x.Content = TextBlock("x")
		return x
	case CompactionSummaryChunk:
		x.Content = TextBlock("x")
		return x
	case ToolCall:
		x.Content = fix(x.Content)
		return x
	case ToolCallUpdate:
		x.Content = fix(x.Content)
		return x
	default:
		// The other kinds hold no content block.
		return u
	}
}

// FuzzUpdateEncode compares the variants with the legacy reference on
// updates built from a seed and fuzzed text (run with
// -fuzz=FuzzUpdateEncode).
func FuzzUpdateEncode(f *testing.F) {
	f.Add(uint64(1), "<&>", "\u2028")
	f.Add(uint64(7), "\xff", "\x00")
	f.Fuzz(func(t *testing.T, seed uint64, s1, s2 string) {
		g := &gen{r: rand.New(rand.NewPCG(seed, 3)), extra: []string{s1, s2}}
		for range 4 {
			u := g.update(true)
			want, err := json.Marshal(legacyOf(u))
			if err != nil {
				t.Fatal(err)
			}
			if got := mustMarshalUpdate(t, u); !bytes.Equal(got, want) {
				t.Fatalf("\n got %s\nwant %s", got, want)
			}
		}
	})
}

// BenchmarkMarshalUpdate measures MarshalUpdate on a mix of the updates
// a turn sends (chunks, a tool call with a diff, its final update).
func BenchmarkMarshalUpdate(b *testing.B) {
	old := "mode=DEBUG\nlevel=info"
	line := 1
	mix := []Update{
		AgentMessageChunk{Content: TextBlock("a chunk of streamed text, about forty bytes")},
		AgentThoughtChunk{Content: TextBlock("thinking about <the> next step & more")},
		ToolCall{ToolCallID: "call_00_0", Title: "Edit config.txt", Kind: "edit", Status: StatusPending,
			Locations: []ToolCallLocation{{Path: "/proj/config.txt"}}, RawInput: json.RawMessage(`{"path":"config.txt"}`),
			Content: []ToolCallContent{Diff{Path: "/proj/config.txt", OldText: &old, NewText: "mode=RELEASE\nlevel=info"}}},
		ToolCallUpdate{ToolCallID: "call_00_0", Status: StatusCompleted, RawOutput: JSONString("The file has been updated successfully."),
			Locations: []ToolCallLocation{{Path: "/proj/config.txt", Line: &line}},
			Content:   []ToolCallContent{Diff{Path: "/proj/config.txt", OldText: &old, NewText: "mode=RELEASE\nlevel=info"}}},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := MarshalUpdate(mix[i%len(mix)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
}
