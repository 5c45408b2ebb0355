// Package e2etest holds what the end-to-end tests of package server and
// the process tests of cmd/dsh-acp share: model responses in DeepSeek's
// stream format (OpenAI-compatible `chat.completion.chunk` objects, one
// `data: {...}` event each, then `data: [DONE]`), the replay folders that
// llm.NewReplay and `--replay` read (001.sse, 002.sse, ...), and the
// processes a run left behind.
package e2etest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Usage is the usage block every response of this package ends with,
// in DeepSeek's shape (`stream_options.include_usage`): 1,000 prompt
// tokens of which 896 were cache hits, 50 completion tokens of which 10
// were reasoning.
var Usage = map[string]any{
	"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050,
	"prompt_tokens_details":     map[string]any{"cached_tokens": 896},
	"completion_tokens_details": map[string]any{"reasoning_tokens": 10},
	"prompt_cache_hit_tokens":   896, "prompt_cache_miss_tokens": 104,
}

// Text is a response that streams the reasoning pieces
// (`reasoning_content`), then the text pieces (`content`), then an empty
// content delta with finish_reason finish ("stop", "length", ...) and
// the Usage block.
func Text(reasoning, text []string, finish string) string {
	var b strings.Builder
	chunk := func(delta map[string]any, fin any) {
		m := map[string]any{"id": "x", "object": "chat.completion.chunk", "model": "deepseek-chat",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}}
		if fin != nil {
			m["usage"] = Usage
		}
		data, _ := json.Marshal(m)
		b.WriteString("data: " + string(data) + "\n\n")
	}
	chunk(map[string]any{"role": "assistant", "content": nil, "reasoning_content": ""}, nil)
	for _, r := range reasoning {
		chunk(map[string]any{"reasoning_content": r}, nil)
	}
	for _, s := range text {
		chunk(map[string]any{"content": s}, nil)
	}
	chunk(map[string]any{"content": ""}, finish)
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// ToolCalls is a response whose model calls the given tools ({name,
// arguments JSON text}) in one message, the way DeepSeek streams them: a
// reasoning piece, then per call its index, id (call_00_0, call_00_1, ...)
// and name with empty arguments, then the arguments in two pieces; it
// ends with finish_reason "tool_calls" and the Usage block.
func ToolCalls(calls ...[2]string) string {
	var b strings.Builder
	chunk := func(delta map[string]any, fin any) {
		m := map[string]any{"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}}
		if fin != nil {
			m["usage"] = Usage
		}
		data, _ := json.Marshal(m)
		b.WriteString("data: " + string(data) + "\n\n")
	}
	chunk(map[string]any{"role": "assistant", "reasoning_content": "I will use a tool."}, nil)
	for i, c := range calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_00_%d", i), "type": "function", "function": map[string]any{"name": c[0], "arguments": ""}}}}, nil)
		half := len(c[1]) / 2
		for _, piece := range []string{c[1][:half], c[1][half:]} {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": piece}}}}, nil)
		}
	}
	chunk(map[string]any{"content": ""}, "tool_calls")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
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
