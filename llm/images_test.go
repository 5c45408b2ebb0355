package llm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestImageModels: the --model-images forms and their errors.
func TestImageModels(t *testing.T) {
	for _, c := range []struct {
		in     string
		yes    []string
		no     []string
		string string
	}{
		{"", nil, []string{"deepseek-chat", ""}, ""},
		{"  ", nil, []string{"deepseek-chat"}, ""},
		{" gpt-4o ,qwen-vl", []string{"gpt-4o", "qwen-vl"}, []string{"deepseek-chat", "gpt-4"}, "gpt-4o,qwen-vl"},
		{"*", []string{"deepseek-chat", "anything"}, nil, "*"},
	} {
		m, err := ParseImageModels(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		for _, y := range c.yes {
			if !m.Accepts(y) {
				t.Errorf("%q: %s not accepted", c.in, y)
			}
		}
		for _, n := range c.no {
			if m.Accepts(n) {
				t.Errorf("%q: %s accepted", c.in, n)
			}
		}
		if m.String() != c.string {
			t.Errorf("%q: String %q", c.in, m.String())
		}
	}
	var zero ImageModels
	if zero.Accepts("deepseek-chat") {
		t.Error("the zero value accepts a model")
	}
	for _, bad := range []string{"a,,b", ",", "a,", "*,a"} {
		if _, err := ParseImageModels(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestUserPartsWire: a user message with Parts goes out as the
// OpenAI-style content array, in order, and reads back the same; a
// message without Parts keeps its plain string content.
func TestUserPartsWire(t *testing.T) {
	m := Message{Role: "user", Content: "ignored", Parts: []Part{{Text: "What is <this>?"}, ImagePart("image/png", "iVBORw0KGgo="), {Text: ""}}}
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"user","content":[{"type":"text","text":"What is <this>?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"text","text":""}]}`
	if string(b) != want {
		t.Errorf("wire\n got  %s\n want %s", b, want)
	}
	var back Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, Message{Role: "user", Parts: m.Parts}) {
		t.Errorf("read back %+v", back)
	}
	if b, _ := (Message{Role: "user", Content: "hi"}).MarshalJSON(); string(b) != `{"role":"user","content":"hi"}` {
		t.Errorf("plain user message %s", b)
	}
	if b, _ := (Message{Role: "system", Content: "s", Parts: []Part{{Text: "x"}}}).MarshalJSON(); string(b) != `{"role":"system","content":"s"}` {
		t.Errorf("parts on a system message %s", b)
	}
	if err := json.Unmarshal([]byte(`{"role":"user","content":[{"type":"input_audio"}]}`), &back); err == nil {
		t.Error("an unknown part type read without error")
	}
}

// TestCatalogImages: a price file's "images" reaches the catalog, Merge
// keeps a model's images from either side, and Meter.Images answers from
// --model-images and the catalog (none for DeepSeek's models, none for a
// nil Meter).
func TestCatalogImages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(path, []byte(`{"models":{"vision-x":{"images":true},"text-y":{"contextWindow":1000}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := LoadCatalog(path)
	if err != nil {
		t.Fatal(err)
	}
	if !file.Models["vision-x"].Images || file.Models["text-y"].Images {
		t.Errorf("price file catalog %+v", file.Models)
	}
	c := DeepSeek().Merge(file)
	// Flash (and the Flash names it serves) takes images, Pro none.
	for id, k := range DeepSeek().Models {
		if want := strings.Contains(id, "flash"); k.Images != want {
			t.Errorf("the DeepSeek catalog says %s takes images: %v", id, k.Images)
		}
	}
	back := file.Merge(Catalog{Models: map[string]Known{"vision-x": {ContextWindow: 5}}})
	if k := back.Models["vision-x"]; !k.Images || k.ContextWindow != 5 {
		t.Errorf("merge lost images: %+v", k)
	}
	flag, _ := ParseImageModels("gpt-4o")
	m := &Meter{Catalog: c, ImageModels: flag}
	for model, want := range map[string]bool{"vision-x": true, "gpt-4o": true, "text-y": false, "deepseek-flash": true, "deepseek-v4-pro": false, "deepseek-chat": false} {
		if got := m.Images(model); got != want {
			t.Errorf("Images(%s) = %v, want %v", model, got, want)
		}
	}
	var none *Meter
	if none.Images("vision-x") {
		t.Error("a nil Meter knows a model that takes images")
	}
}
