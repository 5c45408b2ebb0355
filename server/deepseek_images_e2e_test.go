package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// deepSeekModels is DeepSeek's /models answer.
const deepSeekModels = `{"object":"list","data":[{"id":"deepseek-flash","object":"model","owned_by":"deepseek"},{"id":"deepseek-v4-pro","object":"model","owned_by":"deepseek"}]}`

// withDeepSeek is withEndpoint for an endpoint speaking DeepSeek's API
// (--provider deepseek: its catalog), sessions starting on
// deepseek-flash.
func withDeepSeek(e *endpoint) harnessOpts {
	return withEndpoint(e, func(o *server.Options) {
		o.Provider, o.Catalog, o.Model = llm.ProviderDeepSeek, llm.DeepSeek(), "deepseek-flash"
	})
}

// chatMessages are the messages of chat request n of e after the system
// message, as JSON values.
func chatMessages(t *testing.T, e *endpoint, n int) []json.RawMessage {
	t.Helper()
	var msgs []json.RawMessage
	if err := json.Unmarshal(e.request(t, n)["messages"], &msgs); err != nil || len(msgs) == 0 {
		t.Fatalf("request %d messages: %v", n, err)
	}
	return msgs[1:]
}

// TestImageTurnRecording runs testdata/replay/image-turn against a fake
// DeepSeek endpoint serving its 001.sse: deepseek-flash takes images, so
// initialize advertises promptCapabilities.image, and the prompt's
// image goes out as an image_url part exactly as 001.request.json has
// it; the answer streams as recorded.
func TestImageTurnRecording(t *testing.T) {
	dir := filepath.Join(acptest.Recordings(t), "image-turn")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	e := newEndpoint(t, deepSeekModels, string(read("001.sse")))
	h := newHarness(t, withDeepSeek(e))
	sid, _ := newSession(t, h)
	if !promptImageCap(t, h) {
		t.Error("initialize does not advertise images for deepseek-flash")
	}
	data := strings.TrimSpace(string(read("image.b64")))
	if stop, err := h.promptBlocks(sid, acp.TextBlock("What colour is this? One word."), imageBlock("image/png", data)); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	var want struct {
		Model    string            `json:"model"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(read("001.request.json"), &want); err != nil {
		t.Fatal(err)
	}
	got := chatMessages(t, e, 1)
	if len(got) != len(want.Messages) {
		t.Fatalf("%d messages, want %d", len(got), len(want.Messages))
	}
	for i := range got {
		if !jsonEqual(t, got[i], want.Messages[i]) {
			t.Errorf("message %d\n got %s\nwant %s", i, got[i], want.Messages[i])
		}
	}
	if m := string(e.request(t, 1)["model"]); m != `"`+want.Model+`"` {
		t.Errorf("model %s, want %s", m, want.Model)
	}
	if got := joined(h.sessionUpdates(), acp.UpdateAgentMessageChunk); got != "It is red." {
		t.Errorf("answer %q", got)
	}
}

// jsonEqual compares two JSON texts as values.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("not JSON: %s / %s", a, b)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// TestImageOnTextOnlyModel: after a switch to deepseek-v4-pro, which
// takes no images, a prompt with an image is -32602 naming the model,
// and nothing is sent.
func TestImageOnTextOnlyModel(t *testing.T) {
	e := newEndpoint(t, deepSeekModels)
	h := newHarness(t, withDeepSeek(e))
	sid, _ := newSession(t, h)
	setOption(t, h, sid, "model", "deepseek-v4-pro")
	_, err := h.promptBlocks(sid, acp.TextBlock("what is it?"), imageBlock("image/png", pngData))
	var ae *acp.Error
	if !errors.As(err, &ae) || ae.Code != acp.CodeInvalidParams || !strings.Contains(ae.Message, "the model deepseek-v4-pro does not take images; deepseek-flash does: choose it in the Model selector") {
		t.Errorf("prompt: %v", err)
	}
	e.mu.Lock()
	n := len(e.requests)
	e.mu.Unlock()
	if n != 0 {
		t.Errorf("%d chat requests for a refused prompt", n)
	}
}

// TestToolResultImages: `read` of a PNG inside the project gives an
// image-taking model (deepseek-flash) the image itself, in a user
// message after the tool message (which says so), and the card shows
// it; a text-only model (deepseek-v4-pro) gets a one-line note with the
// image's size in pixels and bytes instead, and no image.
func TestToolResultImages(t *testing.T) {
	raw, err := base64.StdEncoding.DecodeString(pngData)
	if err != nil {
		t.Fatal(err)
	}
	args := `{"file_path":"dot.png"}`
	id := e2etest.CallID(0, 0, "read", args)
	for _, model := range []string{"deepseek-flash", "deepseek-v4-pro"} {
		t.Run(model, func(t *testing.T) {
			e := newEndpoint(t, deepSeekModels, e2etest.ToolCalls([2]string{"read", args}), e2etest.Text(nil, []string{"A dot."}, "stop"))
			h := newHarness(t, withDeepSeek(e))
			if err := os.WriteFile(filepath.Join(h.cwd, "dot.png"), raw, 0o644); err != nil {
				t.Fatal(err)
			}
			sid, _ := newSession(t, h)
			setOption(t, h, sid, "model", model)
			if _, err := h.prompt(sid, "look at dot.png"); err != nil {
				t.Fatal(err)
			}
			msgs := chatMessages(t, e, 2)
			var tool struct {
				Role, Content string
			}
			if len(msgs) < 3 || json.Unmarshal(msgs[2], &tool) != nil || tool.Role != "tool" {
				t.Fatalf("messages %s", msgs)
			}
			takes := model == "deepseek-flash"
			note := "[image: 1×1 PNG, 70 bytes — model takes no images]"
			if takes {
				note = "[image: 1×1 PNG, 70 bytes — sent in the next message]"
			}
			if !strings.Contains(tool.Content, "<type>image</type>") || !strings.Contains(tool.Content, note) {
				t.Errorf("tool message %q does not say %s", tool.Content, note)
			}
			wantImage := `{"role":"user","content":[{"type":"text","text":"The image returned by tool call ` + id + `:"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + pngData + `"}}]}`
			switch {
			case takes && (len(msgs) != 4 || !jsonEqual(t, msgs[3], []byte(wantImage))):
				t.Errorf("messages after the tool result: %s, want %s", msgs[3:], wantImage)
			case !takes && len(msgs) != 3:
				t.Errorf("a text-only model got %s after the tool result", msgs[3:])
			}
			shown := false
			for _, u := range h.sessionUpdates() {
				if c, ok := toolCard(u); ok && c.Status == acp.StatusCompleted {
					for _, item := range c.Content {
						if b, ok := item.(acp.Content); ok && b.Content.Type == acp.BlockImage && b.Content.Data == pngData {
							shown = true
						}
					}
				}
			}
			if !shown {
				t.Error("the read card does not show the image")
			}
		})
	}
}
