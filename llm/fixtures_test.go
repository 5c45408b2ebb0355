package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

type stepsManifest struct {
	Requests []struct {
		Request      int    `json:"request"`
		FinishReason string `json:"finish_reason"`
		ToolCalls    []struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"tool_calls"`
	} `json:"requests"`
}

// noteLine matches a request summary of NOTES.md, e.g.
// - `002` (parent turn 1 step 2): reasoning 74 chars, text "DONE"; finish_reason `stop`.
var noteLine = regexp.MustCompile("(?m)^- `(\\d{3})` \\([^)]*\\): reasoning (\\d+) chars(?:, text \"([^\"]*)\")?")

type fixtureRequest struct {
	Messages []struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		Reasoning  *string `json:"reasoning_content"`
		ToolCallID string  `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

// TestFixturesParse parses every recorded NNN.sse and checks it against
// the scenario's steps.json, NOTES.md and the assistant message the next
// NNN.request.json carries for it.
func TestFixturesParse(t *testing.T) {
	forEachSource(t, fixturesParse)
}

func fixturesParse(t *testing.T, root string) {
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(root, d.Name())
		t.Run(d.Name(), func(t *testing.T) {
			var steps stepsManifest
			if err := json.Unmarshal(readFile(t, filepath.Join(dir, "steps.json")), &steps); err != nil {
				t.Fatal(err)
			}
			notes := map[string][]string{}
			for _, m := range noteLine.FindAllStringSubmatch(string(readFile(t, filepath.Join(dir, "NOTES.md"))), -1) {
				notes[m[1]] = m
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.sse"))
			if len(files) != len(steps.Requests) {
				t.Fatalf("%d .sse files, steps.json lists %d requests", len(files), len(steps.Requests))
			}
			for _, step := range steps.Requests {
				total++
				nnn := fmt.Sprintf("%03d", step.Request)
				data := readFile(t, filepath.Join(dir, nnn+".sse"))
				got := parse(bytes.NewReader(data))
				if got.Code != "" {
					t.Fatalf("%s.sse: %s", nnn, got.Msg)
				}
				sameResult(t, nnn+".sse one-byte reads", parse(iotest.OneByteReader(bytes.NewReader(data))), got)
				crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
				sameResult(t, nnn+".sse crlf", parse(bytes.NewReader(crlf)), got)
				res := got.Resp

				if res.FinishReason != step.FinishReason {
					t.Errorf("%s: finish %q, steps.json %q", nnn, res.FinishReason, step.FinishReason)
				}
				var wantCalls []ToolCall
				for _, c := range step.ToolCalls {
					wantCalls = append(wantCalls, ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
				}
				if !reflect.DeepEqual(res.ToolCalls, wantCalls) {
					t.Errorf("%s: tool calls %+v, steps.json %+v", nnn, res.ToolCalls, wantCalls)
				}
				if res.Usage == nil || res.Usage.TotalTokens == 0 || res.Usage.TotalTokens != res.Usage.PromptTokens+res.Usage.CompletionTokens {
					t.Errorf("%s: usage %+v", nnn, res.Usage)
				}
				checkDeltasJoin(t, nnn, got.Deltas, res)

				note, ok := notes[nnn]
				if !ok {
					t.Fatalf("%s: no summary line in NOTES.md", nnn)
				}
				if n, _ := strconv.Atoi(note[2]); utf8.RuneCountInString(res.Reasoning) != n {
					t.Errorf("%s: reasoning %d chars, NOTES.md says %d", nnn, utf8.RuneCountInString(res.Reasoning), n)
				}
				if res.Text != note[3] {
					t.Errorf("%s: text %q, NOTES.md says %q", nnn, res.Text, note[3])
				}
				checkNextRequest(t, dir, step.Request, res)
			}
		})
	}
	if total == 0 {
		t.Fatal("no fixture streams found")
	}
}

// checkDeltasJoin checks the deltas add up to the response.
func checkDeltasJoin(t *testing.T, nnn string, deltas []Delta, res *Response) {
	t.Helper()
	var reasoning, text strings.Builder
	args := map[int]*strings.Builder{}
	for _, d := range deltas {
		if d.Text == "" && d.Kind != DeltaToolCall {
			t.Errorf("%s: empty delta %+v", nnn, d)
		}
		switch d.Kind {
		case DeltaReasoning:
			reasoning.WriteString(d.Text)
		case DeltaText:
			text.WriteString(d.Text)
		case DeltaToolCall:
			args[d.Index] = &strings.Builder{}
		case DeltaToolArgs:
			args[d.Index].WriteString(d.Text)
		}
	}
	if reasoning.String() != res.Reasoning || text.String() != res.Text || len(args) != len(res.ToolCalls) {
		t.Errorf("%s: deltas do not add up to the response", nnn)
	}
	for i, c := range res.ToolCalls {
		if args[i] == nil || args[i].String() != c.Arguments {
			t.Errorf("%s: tool args deltas for %d do not match", nnn, i)
		}
	}
}

// checkNextRequest compares the response of request n with the last
// assistant message of (n+1).request.json, when that file exists.
func checkNextRequest(t *testing.T, dir string, n int, res *Response) {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("%03d.request.json", n+1))
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var req fixtureRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	last := -1
	for i, m := range req.Messages {
		if m.Role == "assistant" {
			last = i
		}
	}
	if last < 0 {
		t.Fatalf("%s: no assistant message", path)
	}
	m := req.Messages[last]
	if m.Content == nil || *m.Content != res.Text {
		t.Errorf("%s: assistant content %v, response text %q", path, m.Content, res.Text)
	}
	if len(res.ToolCalls) > 0 {
		if m.Reasoning == nil || *m.Reasoning != res.Reasoning {
			t.Errorf("%s: reasoning passback %v, response reasoning %q", path, m.Reasoning, res.Reasoning)
		}
	} else if m.Reasoning != nil {
		t.Errorf("%s: reasoning_content on a message without tool calls", path)
	}
	if len(m.ToolCalls) != len(res.ToolCalls) {
		t.Fatalf("%s: %d tool calls, response has %d", path, len(m.ToolCalls), len(res.ToolCalls))
	}
	for i, c := range m.ToolCalls {
		want := res.ToolCalls[i]
		if c.ID != want.ID || c.Type != "function" || c.Function.Name != want.Name || c.Function.Arguments != want.Arguments {
			t.Errorf("%s: tool call %d %+v, response %+v", path, i, c, want)
		}
	}
}
