package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// recordedTurn is what one recorded streaming response (NNN.sse) says:
// its reasoning_content pieces and its content pieces, each joined in order.
type recordedTurn struct {
	reasoning string
	content   string
}

// readRecordedTurn parses a replay fixture's NNN.sse body ("data: {chunk}"
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

// nodeEnv is what the interop tests need: the repo root, the node binary and
// this package's dir holding run.mjs and node_modules.
type nodeEnv struct {
	root string
	node string
	dir  string
}

// needNode returns the node environment or skips (fails under CI=true) when
// node, npm or interop/node_modules is missing.
func needNode(t *testing.T) nodeEnv {
	t.Helper()
	root := acptest.RepoRoot(t)
	node, err := exec.LookPath("node")
	if err != nil {
		acptest.SkipOrFail(t, "interop: node not found on PATH; install Node.js >= 20 to run the ACP SDK interop test")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		acptest.SkipOrFail(t, "interop: npm not found on PATH; install npm and run `npm ci` in interop/")
	}
	dir := filepath.Join(root, "interop")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json")); err != nil {
		acptest.SkipOrFail(t, "interop: interop/node_modules lacks @agentclientprotocol/sdk; run `npm ci` in interop/")
	}
	return nodeEnv{root: root, node: node, dir: dir}
}

// needFixtures returns the replay fixture dir (../shared/fixtures/replay
// from the repo root) or skips (fails under CI=true) when it is absent.
func needFixtures(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(root, "..", "shared", "fixtures", "replay")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		acptest.SkipOrFail(t, "interop: replay fixtures not found at %s (../shared relative to the repo root)", dir)
	}
	return dir
}
