package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoCardShowsToolEnvelope: no card of any golden transcript (tool
// calls, their updates, permission requests) shows the text envelope a
// file tool gives the model ("<path>…</path><type>file</type>…"); that
// text is the model's and stays in rawOutput only.
func TestNoCardShowsToolEnvelope(t *testing.T) {
	type card struct {
		SessionUpdate string          `json:"sessionUpdate"`
		Content       json.RawMessage `json:"content"`
	}
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no goldens: %v", err)
	}
	cards := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<24)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimPrefix(strings.TrimPrefix(sc.Text(), "<- "), "-> ")
			var m struct {
				Params struct {
					Update   *card `json:"update"`
					ToolCall *card `json:"toolCall"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(line), &m) != nil {
				continue
			}
			if u := m.Params.Update; u != nil && u.SessionUpdate != "tool_call" && u.SessionUpdate != "tool_call_update" {
				m.Params.Update = nil
			}
			for _, c := range []*card{m.Params.Update, m.Params.ToolCall} {
				if c == nil || len(c.Content) == 0 {
					continue
				}
				cards++
				var items []struct {
					Content struct{ Text string } `json:"content"`
				}
				if err := json.Unmarshal(c.Content, &items); err != nil {
					t.Fatalf("%s:%d: content %s: %v", f, n, c.Content, err)
				}
				for _, it := range items {
					if strings.Contains(it.Content.Text, "<path>") || strings.Contains(it.Content.Text, "<type>file</type>") {
						t.Errorf("%s:%d: a card shows the tool's envelope: %q", f, n, it.Content.Text)
					}
				}
			}
		}
	}
	if cards < 20 {
		t.Fatalf("only %d cards with content in the goldens: the scan reads nothing", cards)
	}
}
