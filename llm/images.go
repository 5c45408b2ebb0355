package llm

import (
	"fmt"
	"sort"
	"strings"
)

// ImageModels is a set of models that take image input (user messages
// whose content array holds image_url parts, Message.Parts), as
// --model-images names them; the catalog's models say it themselves
// (Known.Images: on DeepSeek's API, deepseek-flash does). The zero value
// is no model. Another endpoint's models that take images are named
// with --model-images (or "images": true in a --prices file).
type ImageModels struct {
	all   bool
	names map[string]bool
}

// ParseImageModels reads a --model-images value: model names separated
// by commas (blanks around each ignored), or "*" for every model; ""
// (or only blanks) is no model. Errors: an empty name between commas,
// and "*" mixed with names.
func ParseImageModels(s string) (ImageModels, error) {
	var m ImageModels
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for i, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			return ImageModels{}, fmt.Errorf("model name %d of %q is empty", i+1, s)
		case name == "*":
			m.all = true
		default:
			if m.names == nil {
				m.names = map[string]bool{}
			}
			m.names[name] = true
		}
	}
	if m.all && len(m.names) > 0 {
		return ImageModels{}, fmt.Errorf("%q: use either * (every model) or model names, not both", s)
	}
	return m, nil
}

// Any reports whether the set names a model (or is "*").
func (m ImageModels) Any() bool {
	return m.all || len(m.names) > 0
}

// Accepts reports whether model takes images.
func (m ImageModels) Accepts(model string) bool {
	return m.all || m.names[model]
}

// String is the set as ParseImageModels reads it: "*", the names sorted
// and comma-separated, or "".
func (m ImageModels) String() string {
	if m.all {
		return "*"
	}
	names := make([]string, 0, len(m.names))
	for n := range m.names {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
