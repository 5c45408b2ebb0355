package server_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// pngData is a 1×1 PNG, base64.
const pngData = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

func (h *harness) promptBlocks(sid string, blocks ...acp.ContentBlock) (acp.StopReason, error) {
	var pr acp.PromptResponse
	err := h.call("session/prompt", map[string]any{"sessionId": sid, "prompt": blocks}, &pr)
	return pr.StopReason, err
}

func imageBlock(mime, data string) acp.ContentBlock {
	return acp.ContentBlock{Type: acp.BlockImage, MimeType: mime, Data: data}
}

// promptImageCap is what initialize advertised as promptCapabilities.image.
func promptImageCap(t *testing.T, h *harness) bool {
	t.Helper()
	for _, l := range h.tr.AgentLines() {
		var m struct {
			ID     int `json:"id"`
			Result *struct {
				AgentCapabilities struct {
					PromptCapabilities map[string]any `json:"promptCapabilities"`
				} `json:"agentCapabilities"`
			} `json:"result"`
		}
		if json.Unmarshal(l, &m) == nil && m.ID == 1 && m.Result != nil {
			v, ok := m.Result.AgentCapabilities.PromptCapabilities["image"].(bool)
			if !ok {
				t.Fatalf("promptCapabilities %v has no image flag", m.Result.AgentCapabilities.PromptCapabilities)
			}
			return v
		}
	}
	t.Fatal("no initialize answer")
	return false
}

// TestImagePrompt: with a model that takes images (--model-images),
// initialize advertises image, and a prompt's image reaches the model as
// an image_url part (a data URL) of the user message, between its
// texts. The log keeps it: session/load replays the user message with
// the image block, and the next request after the load sends it again.
func TestImagePrompt(t *testing.T) {
	m := newRecordingModel(t, e2etest.Text(nil, []string{"A red dot."}, "stop"), e2etest.Text(nil, []string{"Still red."}, "stop"))
	state := t.TempDir()
	h := newHarness(t, harnessOpts{model: m.client("k"), stateDir: state, images: "deepseek-chat"})
	sid := h.start(harnessOpts{})
	if !promptImageCap(t, h) {
		t.Error("initialize does not advertise image for a model that takes images")
	}
	if stop, err := h.promptBlocks(sid, acp.TextBlock("What is in "), acp.TextBlock("this picture?"), imageBlock("image/png", pngData), acp.TextBlock("Be brief.")); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt = %q, %v", stop, err)
	}
	wantUser := `{"role":"user","content":[{"type":"text","text":"What is in this picture?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + pngData + `"}},{"type":"text","text":"Be brief."}]}`
	m.mu.Lock()
	got := string(m.reqs[0][1])
	m.mu.Unlock()
	if got != wantUser {
		t.Errorf("user message on the wire\n got  %s\n want %s", got, wantUser)
	}
	h.stop()

	h2 := newHarness(t, harnessOpts{model: m.client("k"), stateDir: state, cwd: h.cwd, images: "deepseek-chat"})
	replay, err := h2.load(sid, h.cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, u := range replay {
		if kindOf(u) == "user_message_chunk" {
			blocks = append(blocks, string(u["content"]))
		}
	}
	wantBlocks := []string{`{"type":"text","text":"What is in "}`, `{"type":"text","text":"this picture?"}`,
		`{"type":"image","data":"` + pngData + `","mimeType":"image/png"}`, `{"type":"text","text":"Be brief."}`}
	if strings.Join(blocks, "\n") != strings.Join(wantBlocks, "\n") {
		t.Errorf("replayed user message\n got  %s\n want %s", blocks, wantBlocks)
	}
	if stop, err := h2.prompt(sid, "And now?"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("prompt after load = %q, %v", stop, err)
	}
	m.mu.Lock()
	again := string(m.reqs[1][1])
	m.mu.Unlock()
	if again != wantUser {
		t.Errorf("the image after load\n got  %s\n want %s", again, wantUser)
	}
}

// TestImageRefused: with the default (no model takes images) initialize
// does not advertise image and a prompt with one is -32602 naming the
// model; malformed images are -32602 as well (the cap per prompt is
// bridge's TestPromptImageCap). No model request is made, and the
// session still works.
func TestImageRefused(t *testing.T) {
	m := newRecordingModel(t, e2etest.Text(nil, []string{"Fine."}, "stop"))
	h := newHarness(t, harnessOpts{model: m.client("k")})
	sid := h.start(harnessOpts{})
	if promptImageCap(t, h) {
		t.Error("initialize advertises image for deepseek-chat")
	}
	_, err := h.promptBlocks(sid, acp.TextBlock("look"), imageBlock("image/png", pngData))
	var ae *acp.Error
	if !errors.As(err, &ae) || ae.Code != acp.CodeInvalidParams || !strings.Contains(ae.Message, "prompt[1]: the model deepseek-chat does not take images") {
		t.Errorf("image for a text-only model: %v", err)
	}

	hi := newHarness(t, harnessOpts{model: m.client("k"), images: "*"})
	sid2 := hi.start(harnessOpts{})
	for _, c := range []struct {
		blocks []acp.ContentBlock
		want   string
	}{
		{[]acp.ContentBlock{imageBlock("image/png", "")}, "prompt[0]: an image needs its data"},
		{[]acp.ContentBlock{imageBlock("text/plain", pngData)}, `prompt[0]: image mimeType "text/plain" is not an image type`},
		{[]acp.ContentBlock{imageBlock("image/png", "not base64!")}, "prompt[0]: image data is not base64"},
	} {
		_, err := hi.promptBlocks(sid2, c.blocks...)
		if !errors.As(err, &ae) || ae.Code != acp.CodeInvalidParams || !strings.Contains(ae.Message, c.want) {
			t.Errorf("want -32602 %q, got %v", c.want, err)
		}
	}
	if m.requests() != 0 {
		t.Errorf("%d model requests for refused prompts", m.requests())
	}
	if stop, err := hi.promptBlocks(sid2, imageBlock("image/png", pngData)); err != nil || stop != acp.StopEndTurn {
		t.Errorf("an image alone after the refusals: %q, %v", stop, err)
	}
}

// TestImageModelChoice: images follow the session's model. A catalog
// model that takes images (a --prices file's "images": true) makes
// initialize advertise image although the default model takes none; a
// prompt with an image is -32602 naming the default model until the
// session switches to the image model, and then reaches it.
func TestImageModelChoice(t *testing.T) {
	m := newRecordingModel(t, e2etest.Text(nil, []string{"A dot."}, "stop"))
	h := newHarness(t, harnessOpts{model: m.client("k"), options: func(o *server.Options) {
		o.Catalog = llm.Catalog{Offer: []string{"vision-x"}, Models: map[string]llm.Known{"vision-x": {Images: true}}}
	}})
	sid := h.start(harnessOpts{})
	if !promptImageCap(t, h) {
		t.Error("initialize does not advertise image though a known model takes images")
	}
	_, err := h.promptBlocks(sid, acp.TextBlock("look"), imageBlock("image/png", pngData))
	var ae *acp.Error
	if !errors.As(err, &ae) || ae.Code != acp.CodeInvalidParams || !strings.Contains(ae.Message, "the model deepseek-chat does not take images") {
		t.Errorf("image on the default model: %v", err)
	}
	setOption(t, h, sid, "model", "vision-x")
	if stop, err := h.promptBlocks(sid, acp.TextBlock("look"), imageBlock("image/png", pngData)); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("image on vision-x: %q, %v", stop, err)
	}
	m.mu.Lock()
	user := string(m.reqs[0][1])
	m.mu.Unlock()
	if want := `{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + pngData + `"}}]}`; user != want {
		t.Errorf("user message %s, want %s", user, want)
	}
}
