// Package e2etest holds what the end-to-end tests of package server and
// the process tests of cmd/dsh-acp share: model responses in DeepSeek's
// exact thinking-mode stream format (the shape llm's TestRecordingShape
// checks the recordings against: `chat.completion.chunk` objects with
// id, created, model and fingerprint, one `data: {...}` event each, the
// usage on the closing chunk, then `data: [DONE]`), whole or part by part
// (HeldStream), all written by one encoder whose output llm's
// TestBuilderShape checks for every exported builder; the replay folders
// that llm.NewReplay and `--replay` read (001.sse, 002.sse, ...); and the
// processes a run left behind.
package e2etest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The envelope every chunk of a stream carries, as in the repository's
// hand-written recordings (testdata/replay/README.md): the thinking-mode
// model name of the API, a fingerprint saying the stream is not a live
// one, and a fixed time (Unix seconds).
const (
	Model       = "deepseek-reasoner"
	Fingerprint = "fp_dshacp_handwritten"
	Created     = 1767225600
)

// defaultReasoning is the reasoning of a Text response given none: in
// thinking mode every response reasons first.
const defaultReasoning = "The answer is ready."

// Text is a response in DeepSeek's exact thinking-mode stream format
// (as recorded from DeepSeek's API): the opening role chunk, one
// chunk per reasoning piece (`reasoning_content`), one per text piece
// (`content`), then the closing chunk with finish_reason finish ("stop",
// "length", ...) and the usage. No reasoning (nil, or only empty
// pieces) gives the one piece "The answer is ready."; empty pieces are
// left out (a live stream sends none).
func Text(reasoning, text []string, finish string) string {
	if strings.Join(reasoning, "") == "" {
		reasoning = []string{defaultReasoning}
	}
	s := newStream(append(append([]string{finish}, reasoning...), text...))
	s.open()
	for _, r := range reasoning {
		s.reasoning(r)
	}
	for _, t := range text {
		s.text(t)
	}
	return s.close(finish)
}

// ToolCalls is a response whose model calls the given tools ({name,
// arguments JSON text}) in one message, in DeepSeek's exact stream
// format: the opening chunk, the reasoning piece "I will use a tool.",
// then per call a first fragment with its index, id, type and name with
// empty arguments, then the arguments in two pieces (cut in the middle,
// at a character boundary), and the closing chunk with finish_reason
// "tool_calls" and the usage. The ids are CallID(0, i, name, arguments).
func ToolCalls(calls ...[2]string) string { return ToolCallsAt(0, calls...) }

// ToolCallsAt is ToolCalls for the step-th response of a recording (from
// 0): the ids are CallID(step, i, ...), so that the same call made again
// in a later step has an id of its own, as a live model's would be.
func ToolCallsAt(step int, calls ...[2]string) string {
	key := []string{"tool_calls", fmt.Sprint(step)}
	for _, c := range calls {
		key = append(key, c[0], c[1])
	}
	s := newStream(key)
	s.open()
	s.reasoning("I will use a tool.")
	for i, c := range calls {
		name, args := c[0], c[1]
		half := len(args) / 2
		for half > 0 && !utf8.RuneStart(args[half]) {
			half--
		}
		s.call(i, CallID(step, i, name, args), name)
		s.args(i, args[:half], args[half:])
	}
	return s.close("tool_calls")
}

// CallID is the id ToolCallsAt gives the index-th call (from 0) of its
// step-th response: "call_", the index in two digits, "_" and 24 letters
// and digits (the live shape), derived from step, index, name and
// arguments.
func CallID(step, index int, name, args string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%d\x00%s\x00%s", step, index, name, args)))
	var b strings.Builder
	fmt.Fprintf(&b, "call_%02d_", index)
	for _, c := range sum[:24] {
		b.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	return b.String()
}

// stream writes the chunks of one response.
type stream struct {
	b      strings.Builder
	id     string
	reason int // reasoning tokens so far
	tokens int // answer tokens so far (text, tool names and arguments)
}

// newStream starts a response whose chunk id, a UUID, is derived from
// key (the response's contents): each response has its own, as live.
func newStream(key []string) *stream {
	sum := sha256.Sum256([]byte(strings.Join(key, "\x00")))
	id := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", binary.BigEndian.Uint32(sum[0:4]), binary.BigEndian.Uint16(sum[4:6]),
		binary.BigEndian.Uint16(sum[6:8]), binary.BigEndian.Uint16(sum[8:10]), sum[10:16])
	return &stream{id: id}
}

// chunk writes one `data: {chunk}` event: delta (JSON text) in the one
// choice, finish_reason (JSON text), usage (JSON text).
func (s *stream) chunk(delta, finish, usage string) {
	fmt.Fprintf(&s.b, `data: {"id":%s,"object":"chat.completion.chunk","created":%d,"model":%s,"system_fingerprint":%s,`+
		`"choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":%s}`+"\n\n",
		quote(s.id), Created, quote(Model), quote(Fingerprint), delta, finish, usage)
}

func (s *stream) delta(d string) { s.chunk(d, "null", "null") }

func (s *stream) open() {
	s.delta(`{"role":"assistant","content":null,"reasoning_content":""}`)
}

func (s *stream) reasoning(r string) {
	if r == "" {
		return
	}
	s.reason += tokens(r)
	s.delta(`{"content":null,"reasoning_content":` + quote(r) + `}`)
}

// text writes an answer piece; an empty one is left out.
func (s *stream) text(t string) {
	if t == "" {
		return
	}
	s.tokens += tokens(t)
	s.delta(`{"content":` + quote(t) + `,"reasoning_content":null}`)
}

// call writes the first fragment of the tool call at index (from 0): its
// id, type and name, with empty arguments.
func (s *stream) call(index int, id, name string) {
	s.tokens += tokens(name)
	s.delta(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]}`,
		index, quote(id), quote(name)))
}

// args writes pieces of the arguments of the tool call at index, one
// chunk each; empty pieces are left out.
func (s *stream) args(index int, parts ...string) {
	for _, p := range parts {
		if p != "" {
			s.tokens += tokens(p)
			s.delta(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, index, quote(p)))
		}
	}
}

// close writes the closing chunk, with the usage, and `data: [DONE]`.
// The token counts are made up from the lengths of the pieces: prompt =
// cache hit (256, a multiple of 64 as DeepSeek's cache counts) + miss;
// completion = reasoning + answer.
func (s *stream) close(finish string) string {
	const hit, miss = 256, 31
	return s.closeWith(finish, LiveUsage{Prompt: hit + miss, Completion: s.reason + max(s.tokens, 1), CacheHit: hit, Reasoning: s.reason})
}

// Usage is the usage block of a response this package wrote, in tokens:
// Prompt is CacheHit + CacheMiss, Completion includes Reasoning. The
// figures differ from response to response (they follow the lengths of
// its pieces), so a test reads them with UsageOf instead of assuming
// them.
type Usage struct {
	Prompt, Completion, Reasoning, CacheHit, CacheMiss int
}

// Used is Prompt + Completion: the context in use after the response (ACP
// usage_update's used).
func (u Usage) Used() int { return u.Prompt + u.Completion }

// UsageOf returns the usage block of body, a response of Text or
// ToolCallsAt (the one chunk whose usage is not null); it fails t when
// body has none or more than one.
func UsageOf(t testing.TB, body string) Usage {
	t.Helper()
	var found []Usage
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Usage *struct {
				Prompt     int `json:"prompt_tokens"`
				Completion int `json:"completion_tokens"`
				Details    struct {
					Reasoning int `json:"reasoning_tokens"`
				} `json:"completion_tokens_details"`
				Hit  int `json:"prompt_cache_hit_tokens"`
				Miss int `json:"prompt_cache_miss_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("e2etest.UsageOf: a chunk is not JSON (%v): %s", err, data)
		}
		if u := c.Usage; u != nil {
			found = append(found, Usage{Prompt: u.Prompt, Completion: u.Completion, Reasoning: u.Details.Reasoning, CacheHit: u.Hit, CacheMiss: u.Miss})
		}
	}
	if len(found) != 1 {
		t.Fatalf("e2etest.UsageOf: %d usage blocks in the response, want 1", len(found))
	}
	return found[0]
}

// tokens is a made-up token count of s: one per four bytes, at least one.
func tokens(s string) int { return max(1, (len(s)+3)/4) }

// quote is s as a JSON string the way DeepSeek writes it: no HTML
// escaping.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// Replay writes bodies as DIR/001.sse, 002.sse, ... in a fresh temporary
// directory of t and returns DIR; the Nth model request is answered with
// the Nth body. It fails t when a file cannot be written.
func Replay(t testing.TB, bodies ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i, b := range bodies {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d.sse", i+1)), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ProcessesWith lists the live (non-zombie) processes whose command line
// contains marker, as "PID: command line" (arguments joined by spaces),
// read from /proc. Tests put a marker unique to the run in the commands
// they start, so processes of other test runs on the machine never match.
func ProcessesWith(marker string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 0 && f[0] != "Z" {
			out = append(out, filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// ToolCallsChunked is ToolCallsAt with the arguments of each call in
// pieces of size bytes, cut at character boundaries, so that pieces break
// inside keys, strings and numbers, the way DeepSeek streams them token by
// token (size <= 0: one character each). The ids are CallID(step, i,
// name, arguments), the same as ToolCallsAt gives.
func ToolCallsChunked(step, size int, calls ...[2]string) string {
	key := []string{"tool_calls chunked", fmt.Sprint(step, size)}
	for _, c := range calls {
		key = append(key, c[0], c[1])
	}
	s := newStream(key)
	s.open()
	s.reasoning("I will use a tool.")
	for i, c := range calls {
		s.call(i, CallID(step, i, c[0], c[1]), c[0])
		s.args(i, pieces(c[1], size)...)
	}
	return s.close("tool_calls")
}

// pieces cuts s into pieces of at most size bytes at character
// boundaries (size <= 0: one character each; a character longer than
// size is a piece of its own).
func pieces(s string, size int) []string {
	var out []string
	for len(s) > 0 {
		n := 0
		for n < len(s) {
			_, w := utf8.DecodeRuneInString(s[n:])
			if n > 0 && (size <= 0 || n+w > size) {
				break
			}
			n += w
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// CutStream is a response that breaks off after its first text piece:
// no closing chunk and no [DONE], as when the connection drops.
func CutStream(text string) string {
	full := Text([]string{"Summing up."}, []string{text}, "stop")
	parts := strings.SplitAfter(full, "\n\n")
	return strings.Join(parts[:3], "")
}
