package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// liveChunk is a chat.completion.chunk with its fields in the order live
// DeepSeek streams send them; re-encoding a decoded chunk gives the same
// bytes only when the chunk has exactly these fields, in this order,
// compact.
type liveChunk struct {
	ID          string       `json:"id"`
	Object      string       `json:"object"`
	Created     int64        `json:"created"`
	Model       string       `json:"model"`
	Fingerprint string       `json:"system_fingerprint"`
	Choices     []liveChoice `json:"choices"`
	Usage       *liveUsage   `json:"usage"`
}

type liveChoice struct {
	Index        int             `json:"index"`
	Delta        json.RawMessage `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type liveUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptCacheHitTokens  int `json:"prompt_cache_hit_tokens"`
	PromptCacheMissTokens int `json:"prompt_cache_miss_tokens"`
}

var (
	uuidRe   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	callIDRe = regexp.MustCompile(`^call_[0-9]{2}_[A-Za-z0-9]{24}$`)
)

// Delta shapes of a live DeepSeek thinking-mode stream (as recorded),
// matched on the delta's exact bytes.
var (
	openingDelta   = `{"role":"assistant","content":null,"reasoning_content":""}`
	closingDelta   = `{"content":"","reasoning_content":null}`
	reasoningDelta = regexp.MustCompile(`^\{"content":null,"reasoning_content":("(?:[^"\\]|\\.)+")\}$`)
	textDelta      = regexp.MustCompile(`^\{"content":("(?:[^"\\]|\\.)+"),"reasoning_content":null\}$`)
	callOpenDelta  = regexp.MustCompile(`^\{"tool_calls":\[\{"index":(\d+),"id":"([^"]+)","type":"function","function":\{"name":"([A-Za-z0-9_-]+)","arguments":""\}\}\]\}$`)
	callArgsDelta  = regexp.MustCompile(`^\{"tool_calls":\[\{"index":(\d+),"function":\{"arguments":("(?:[^"\\]|\\.)+")\}\}\]\}$`)
)

// TestRecordingShape: every NNN.sse, the repository's own recordings and
// the recorded real sessions alike, has the byte shape of a live DeepSeek
// thinking-mode stream: "data: {chunk}" events and a final "data: [DONE]",
// chunks with the same id, created, model and fingerprint, the opening
// role chunk, reasoning pieces, then text or tool calls (index 0, 1, ...
// in turn, each a name fragment and argument pieces), and a closing chunk
// with the finish reason and the usage (cache hit + miss = prompt
// tokens). The own recordings are written by hand; this keeps them the
// shape of the real ones. TestBuilderShape applies the same check to the
// streams internal/e2etest builds.
func TestRecordingShape(t *testing.T) {
	forEachSource(t, func(t *testing.T, root string) {
		files, err := filepath.Glob(filepath.Join(root, "*", "[0-9][0-9][0-9].sse"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no NNN.sse under %s (%v)", root, err)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(root, f)
			if err := checkLiveShape(readFile(t, f)); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		}
	})
}

// checkLiveShape returns the first way body differs from a live stream.
func checkLiveShape(body []byte) error {
	rest, ok := bytes.CutSuffix(body, []byte("data: [DONE]\n\n"))
	if !ok {
		return fmt.Errorf("does not end with %q", "data: [DONE]\n\n")
	}
	events := strings.Split(strings.TrimSuffix(string(rest), "\n\n"), "\n\n")
	if len(events) < 3 {
		return fmt.Errorf("%d chunks: want an opening chunk, pieces and a closing chunk", len(events))
	}
	var first liveChunk
	phase := 0 // 0 reasoning, 1 text, 2 tool call arguments
	reasoning, text, args := 0, 0, 0
	calls := 0 // tool calls opened; the current one has index calls-1
	for i, ev := range events {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.ContainsAny(data, "\r\n") {
			return fmt.Errorf("event %d is not one %q line: %q", i+1, "data: ", ev)
		}
		var c liveChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return fmt.Errorf("chunk %d: %v", i+1, err)
		}
		var again bytes.Buffer
		enc := json.NewEncoder(&again)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c); err != nil {
			return err
		}
		if got := strings.TrimSuffix(again.String(), "\n"); got != data {
			return fmt.Errorf("chunk %d has other fields, order or spacing than a live chunk:\n got %s\nwant %s", i+1, data, got)
		}
		if i == 0 {
			first = c
			if !uuidRe.MatchString(c.ID) || c.Object != "chat.completion.chunk" || c.Created < 1.7e9 || c.Model == "" || c.Fingerprint == "" {
				return fmt.Errorf("chunk 1: id %q object %q created %d model %q fingerprint %q", c.ID, c.Object, c.Created, c.Model, c.Fingerprint)
			}
		} else if c.ID != first.ID || c.Created != first.Created || c.Model != first.Model || c.Fingerprint != first.Fingerprint {
			return fmt.Errorf("chunk %d: id, created, model or fingerprint differ from chunk 1", i+1)
		}
		if len(c.Choices) != 1 || c.Choices[0].Index != 0 || string(c.Choices[0].Logprobs) != "null" {
			return fmt.Errorf("chunk %d: choices %+v, want one choice 0 with null logprobs", i+1, c.Choices)
		}
		ch := c.Choices[0]
		delta := string(ch.Delta)
		if err := checkStrings(ch.Delta); err != nil {
			return fmt.Errorf("chunk %d: %v", i+1, err)
		}
		last := i == len(events)-1
		if !last && (ch.FinishReason != nil || c.Usage != nil) {
			return fmt.Errorf("chunk %d: finish_reason or usage before the closing chunk", i+1)
		}
		switch {
		case i == 0:
			if delta != openingDelta {
				return fmt.Errorf("opening delta %s, want %s", delta, openingDelta)
			}
		case last:
			if delta != closingDelta {
				return fmt.Errorf("closing delta %s, want %s", delta, closingDelta)
			}
			if err := checkClosing(ch.FinishReason, c.Usage, args > 0); err != nil {
				return err
			}
		case reasoningDelta.MatchString(delta):
			if phase != 0 {
				return fmt.Errorf("chunk %d: reasoning after the answer began", i+1)
			}
			reasoning++
		case textDelta.MatchString(delta):
			if phase == 2 {
				return fmt.Errorf("chunk %d: text after a tool call", i+1)
			}
			phase = 1
			text++
		case callOpenDelta.MatchString(delta):
			m := callOpenDelta.FindStringSubmatch(delta)
			if m[1] != fmt.Sprint(calls) {
				return fmt.Errorf("chunk %d: tool call index %s, want %d (calls in turn from 0)", i+1, m[1], calls)
			}
			if !callIDRe.MatchString(m[2]) || m[2][5:7] != fmt.Sprintf("%02d", calls) {
				return fmt.Errorf("chunk %d: tool call id %q, want call_%02d_ and 24 letters and digits", i+1, m[2], calls)
			}
			if phase == 2 && args == 0 {
				return fmt.Errorf("chunk %d: a tool call before the previous one's arguments", i+1)
			}
			phase = 2
			calls++
		case callArgsDelta.MatchString(delta):
			if phase != 2 {
				return fmt.Errorf("chunk %d: arguments before the call's name fragment", i+1)
			}
			if m := callArgsDelta.FindStringSubmatch(delta); m[1] != fmt.Sprint(calls-1) {
				return fmt.Errorf("chunk %d: arguments of call %s inside call %d's", i+1, m[1], calls-1)
			}
			args++
		default:
			return fmt.Errorf("chunk %d: delta %s is none of the live shapes", i+1, delta)
		}
	}
	if reasoning == 0 || (text == 0) == (args == 0) {
		return fmt.Errorf("%d reasoning, %d text and %d argument pieces: want reasoning, then text or a tool call", reasoning, text, args)
	}
	return nil
}

// checkStrings checks that every string in the delta is written as
// DeepSeek writes it: the fewest escapes (none for '&', '<', '>' or '/'),
// as encoding/json writes a string without HTML escaping.
func checkStrings(delta []byte) error {
	dec := json.NewDecoder(bytes.NewReader(delta))
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		str, ok := tok.(string)
		if !ok {
			continue
		}
		raw := bytes.TrimLeft(delta[start:dec.InputOffset()], ",: \t\n")
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(str); err != nil {
			return err
		}
		if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(raw, w) {
			return fmt.Errorf("string %s in the delta, written %s by DeepSeek", raw, w)
		}
	}
}

// checkClosing checks the closing chunk's finish reason (tool_calls when
// the response made a call, else stop or one of the other ends DeepSeek
// documents for an answer: length, content_filter,
// insufficient_system_resource) and usage.
func checkClosing(finish *string, u *liveUsage, call bool) error {
	switch {
	case finish == nil:
		return fmt.Errorf("closing finish_reason null")
	case call && *finish != "tool_calls":
		return fmt.Errorf("closing finish_reason %q after a tool call, want %q", *finish, "tool_calls")
	case !call && !slices.Contains([]string{"stop", "length", "content_filter", "insufficient_system_resource"}, *finish):
		return fmt.Errorf("closing finish_reason %q, want stop, length, content_filter or insufficient_system_resource", *finish)
	}
	if u == nil {
		return fmt.Errorf("closing chunk without usage")
	}
	hit := u.PromptCacheHitTokens
	if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens ||
		hit+u.PromptCacheMissTokens != u.PromptTokens || u.PromptTokensDetails.CachedTokens != hit || hit%64 != 0 ||
		u.CompletionTokensDetails.ReasoningTokens <= 0 || u.CompletionTokensDetails.ReasoningTokens >= u.CompletionTokens {
		return fmt.Errorf("usage %+v: want total = prompt + completion, prompt = cache hit + miss, cached = hit (a multiple of 64), 0 < reasoning < completion", *u)
	}
	return nil
}

// TestBuilderShape: the streams internal/e2etest builds for the server
// and process tests pass the same check as the recordings: text answers
// (with and without given reasoning, every finish reason the tests use),
// one tool call and several in one message, arguments in pieces as small
// as one character, held streams written part by part, arguments with
// characters HTML escaping would change and multi-byte text. Every
// exported function or method of e2etest that returns a string or
// []string must be one of the builders checked here or be named, with
// what it returns, among those that are no stream: a new builder fails
// this test until its streams are checked.
func TestBuilderShape(t *testing.T) {
	usage := e2etest.LiveUsage{Prompt: 104000, Completion: 600, CacheHit: 103936, Reasoning: 90}
	held := e2etest.NewHeldStream(1)
	heldCalls := held.Reasoning("Writing", " it.") + held.Call("write", `{"file_path":"日本/a.txt",`, 0) +
		held.Args(`"content":"<b> & c"}`, 5) + held.Call("bash", `{"command":"a && b"}`, 3) + held.Done("tool_calls")
	heldText := e2etest.NewHeldStream(0)
	cut := e2etest.CutStream("Half a sum")
	cases := []struct {
		name, body string
		uses       []string // the builders that wrote body
	}{
		{"text", e2etest.Text([]string{"Think", "ing."}, []string{"PO", "NG"}, "stop"), []string{"Text"}},
		{"text, no reasoning", e2etest.Text(nil, []string{"Done."}, "stop"), []string{"Text"}},
		{"text, empty piece", e2etest.Text([]string{""}, []string{"", "a"}, "stop"), []string{"Text"}},
		{"length", e2etest.Text(nil, []string{"cut"}, "length"), []string{"Text"}},
		{"overloaded", e2etest.Text(nil, []string{"x"}, "insufficient_system_resource"), []string{"Text"}},
		{"one call", e2etest.ToolCalls([2]string{"read", `{"file_path":"a.txt"}`}), []string{"ToolCalls"}},
		{"two calls", e2etest.ToolCalls([2]string{"bash", `{"command":"grep -c X a && echo <ok>"}`}, [2]string{"todo_write", `{"todos":[]}`}), []string{"ToolCalls"}},
		{"later step", e2etest.ToolCallsAt(3, [2]string{"edit", `{"old_string":"日本","new_string":"x"}`}), []string{"ToolCallsAt"}},
		{"chunked, one character each", e2etest.ToolCallsChunked(0, 0, [2]string{"write", `{"file_path":"日本/a_b.txt","content":"x\ny <&>"}`},
			[2]string{"bash", `{"command":"ls"}`}), []string{"ToolCallsChunked"}},
		{"chunked, later step", e2etest.ToolCallsChunked(2, 3, [2]string{"read", `{"file_path":"notes.txt"}`}), []string{"ToolCallsChunked"}},
		{"live text", e2etest.LiveText([]string{"Sum", "ming."}, []string{"## Summary\n", "- <a> & b"}, usage), []string{"LiveText"}},
		{"live tool call", e2etest.LiveToolCall(nil, 2, "read", `{"file_path":"日本/a.txt"}`,
			e2etest.LiveUsage{Prompt: 2100, Completion: 80, CacheHit: 1984, Reasoning: 20}), []string{"LiveToolCall"}},
		{"held calls", heldCalls, []string{"HeldStream.Reasoning", "HeldStream.Call", "HeldStream.Args", "HeldStream.Done"}},
		{"held text", heldText.Text("Hel", "lo <there>.") + heldText.Done("stop"), []string{"HeldStream.Text", "HeldStream.Done"}},
		// A cut stream lacks its end by design: completed with the rest of
		// the Text it is cut from, it is a whole stream (and if it were not
		// that Text's beginning, the two would be joined whole and fail).
		{"cut stream, completed", cut + strings.TrimPrefix(e2etest.Text([]string{"Summing up."}, []string{"Half a sum"}, "stop"), cut), []string{"CutStream"}},
	}
	// Exported e2etest functions that return strings but no stream.
	notStreams := map[string]string{
		"CallID":            "a tool call id (its shape is checked with the calls)",
		"HeldStream.CallID": "a tool call id",
		"Replay":            "a directory",
		"ProcessesWith":     "process command lines",
	}
	checked := map[string]bool{}
	for _, c := range cases {
		if err := checkLiveShape([]byte(c.body)); err != nil {
			t.Errorf("%s: %v\n%s", c.name, err, c.body)
		}
		for _, u := range c.uses {
			checked[u] = true
		}
	}
	builders := stringFuncs(t, filepath.Join("..", "internal", "e2etest"))
	for _, f := range builders {
		if _, ok := notStreams[f]; !ok && !checked[f] {
			t.Errorf("e2etest.%s returns a string but TestBuilderShape checks none of its streams: add a case (or, if it is no stream, list it in notStreams)", f)
		}
	}
	for f := range checked {
		if !slices.Contains(builders, f) {
			t.Errorf("case uses e2etest.%s, which is no exported function returning a string", f)
		}
	}
	for f := range notStreams {
		if !slices.Contains(builders, f) {
			t.Errorf("notStreams names e2etest.%s, which is no exported function returning a string", f)
		}
	}
	// The check is not blind to what the builders could get wrong: HTML
	// escaping, a short call id, no usage, a chunk encoded from a map
	// (keys in alphabetical order), a usage without the cache fields.
	body := func(name string) string {
		for _, c := range cases {
			if c.name == name {
				return c.body
			}
		}
		t.Fatalf("no case %q", name)
		return ""
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(body("held text"), "data: "), "\n\n")
	var asMap map[string]any
	if err := json.Unmarshal([]byte(first), &asMap); err != nil {
		t.Fatal(err)
	}
	mapped, _ := json.Marshal(asMap)
	closing := body("held calls")
	closing = closing[:strings.LastIndex(closing, `"usage":{`)] + `"usage":{"prompt_tokens":120,"completion_tokens":40,"total_tokens":160}}` + "\n\ndata: [DONE]\n\n"
	broken := map[string]string{
		"html escaped":   strings.Replace(body("two calls"), "&&", `\u0026\u0026`, 1),
		"short id":       strings.Replace(body("one call"), e2etest.CallID(0, 0, "read", `{"file_path":"a.txt"}`), "call_00_0", 1),
		"no usage":       strings.Replace(body("text"), `,"usage":{`, `,"usage":null,"x":{`, 1),
		"map-encoded":    strings.Replace(body("held text"), first, string(mapped), 1),
		"no cache usage": closing,
	}
	for name, b := range broken {
		if b == body("text") || b == body("held text") || b == body("held calls") || b == body("one call") || b == body("two calls") {
			t.Errorf("%s: the breakage changed nothing", name)
		}
		if checkLiveShape([]byte(b)) == nil {
			t.Errorf("%s: the check passed a broken stream", name)
		}
	}
}

// stringFuncs lists the exported functions and the exported methods of
// exported types ("Name", "Type.Name") declared in the non-test Go files
// of dir that return a string or a []string.
func stringFuncs(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	isString := func(e ast.Expr) bool {
		if a, ok := e.(*ast.ArrayType); ok && a.Len == nil {
			e = a.Elt
		}
		id, ok := e.(*ast.Ident)
		return ok && id.Name == "string"
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := goparser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() || fd.Type.Results == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil {
				typ := fd.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				id, ok := typ.(*ast.Ident)
				if !ok || !id.IsExported() {
					continue
				}
				name = id.Name + "." + name
			}
			if slices.ContainsFunc(fd.Type.Results.List, func(r *ast.Field) bool { return isString(r.Type) }) {
				out = append(out, name)
			}
		}
	}
	return out
}
