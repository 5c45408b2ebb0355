package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/acptest"
)

// recordedTurn is what one recorded streaming response (NNN.sse) says:
// its reasoning_content pieces and its content pieces, each joined in order.
type recordedTurn struct {
	reasoning string
	content   string
}

// readRecordedTurn parses a recording's NNN.sse body ("data: {chunk}"
// events up to "data: [DONE]") and joins the deltas of choice 0. Errors: the
// file cannot be read, a data line is not a JSON chunk, or [DONE] is missing.
func readRecordedTurn(path string) (recordedTurn, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return recordedTurn{}, fmt.Errorf("read fixture: %w", err)
	}
	var reasoning, content strings.Builder
	done := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			done = true
			break
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content          *string `json:"content"`
					ReasoningContent *string `json:"reasoning_content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return recordedTurn{}, fmt.Errorf("%s: chunk %q: %w", path, data, err)
		}
		for _, c := range chunk.Choices {
			if c.Delta.ReasoningContent != nil {
				reasoning.WriteString(*c.Delta.ReasoningContent)
			}
			if c.Delta.Content != nil {
				content.WriteString(*c.Delta.Content)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return recordedTurn{}, fmt.Errorf("scan %s: %w", path, err)
	}
	if !done {
		return recordedTurn{}, fmt.Errorf("%s: no data: [DONE]", path)
	}
	return recordedTurn{reasoning: reasoning.String(), content: content.String()}, nil
}

// mustRecordedTurn reads the recording answering the nth (1-based) model
// request of the scenario in dir, failing t when it is missing or broken.
func mustRecordedTurn(t *testing.T, dir string, n int) recordedTurn {
	t.Helper()
	rec, err := readRecordedTurn(filepath.Join(dir, sseName(n)))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// recordedToolCall is one tool call of a scenario's steps.json.
type recordedToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// recordedCall returns the one tool call a scenario's steps.json lists
// (made by its first model request) and its decoded arguments; it fails t
// unless the manifest lists exactly one call, on request 1.
func recordedCall(t *testing.T, dir string) (recordedToolCall, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "steps.json"))
	if err != nil {
		t.Fatal(err)
	}
	var steps struct {
		Requests []struct {
			Request   int                `json:"request"`
			ToolCalls []recordedToolCall `json:"tool_calls"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(b, &steps); err != nil {
		t.Fatalf("steps.json: %v", err)
	}
	var calls []recordedToolCall
	for _, r := range steps.Requests {
		calls = append(calls, r.ToolCalls...)
	}
	if len(calls) != 1 || len(steps.Requests) == 0 || steps.Requests[0].Request != 1 || len(steps.Requests[0].ToolCalls) != 1 {
		t.Fatalf("steps.json lists %v; want one tool call, made by request 1", steps.Requests)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(calls[0].Arguments), &args); err != nil {
		t.Fatalf("steps.json arguments %q: %v", calls[0].Arguments, err)
	}
	return calls[0], args
}

// nodeEnv is what the interop tests need: the repo root, the node binary and
// this package's dir holding run.mjs and node_modules.
type nodeEnv struct {
	root string
	node string
	dir  string
}

// needNode returns the node environment. A missing node (a system tool)
// skips the test, saying so, except under CI=true, where it fails; a
// missing or stale interop/node_modules (the ACP SDK the README's test
// command installs) always fails, saying to run `(cd interop && npm ci)`.
func needNode(t *testing.T) nodeEnv {
	t.Helper()
	root := acptest.RepoRoot(t)
	node, err := exec.LookPath("node")
	if err != nil {
		msg := "interop: the system tool node is not on PATH; install Node.js >= 20 (and npm) to run the ACP SDK interop test"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true, so this fails instead of skipping)")
		}
		t.Skip(msg)
	}
	acptest.SchemaDir(t) // fails unless the pinned SDK is installed
	return nodeEnv{root: root, node: node, dir: filepath.Join(root, "interop")}
}
