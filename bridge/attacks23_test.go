package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/toolask"
	"github.com/dsh-acp/dsh-acp/tools"
	"github.com/dsh-acp/dsh-acp/toolsearch"
	"github.com/dsh-acp/dsh-acp/tooltodo"
)

// pathParams are the parameters of a tool's schema that name a file or
// folder: by name (path, file_path, workdir, ...) or by a description
// that says so.
func pathParams(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	var out []string
	for name, p := range s.Properties {
		d := strings.ToLower(p.Description)
		if p.Type == "string" && (strings.Contains(name, "path") || strings.Contains(name, "dir") ||
			strings.Contains(d, "folder") || strings.Contains(d, "directory") || strings.Contains(d, "file to")) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// fillRequired gives every required property of schema a plain value of
// its type.
func fillRequired(schema json.RawMessage) map[string]any {
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	args := map[string]any{}
	for _, r := range s.Required {
		switch s.Properties[r].Type {
		case "string":
			args[r] = "x"
		case "integer", "number":
			args[r] = 1
		case "boolean":
			args[r] = false
		case "array":
			args[r] = []any{}
		default:
			args[r] = map[string]any{}
		}
	}
	return args
}

// TestAttack23EveryToolLinkDotDot walks every registered built-in tool
// with a path parameter and gives it the link/.. family of inputs
// (deep -> a/b, so deep/../../.. is the project's parent to the kernel,
// and deep/../.. the project): outside, each call asks in default mode
// and, rejected, reads nothing outside; the prompt names the real path.
// The list of tools with path parameters is checked, so that a new tool
// is walked too.
func TestAttack23EveryToolLinkDotDot(t *testing.T) {
	reg, fe, s, cwd, out := deepRig(t, "default")
	for _, tl := range append(toolsearch.Tools(), tooltodo.New(), toolask.New()) {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(out, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	walked := map[string][]string{}
	asked := map[string]bool{}
	for _, sc := range reg.Schemas() {
		for _, p := range pathParams(sc.Parameters) {
			walked[sc.Name] = append(walked[sc.Name], p)
			// The absolute one is written out: filepath.Join would clean
			// its ".." as text.
			for _, value := range []string{"deep/../../../secret.txt", "deep/../../../new.txt", "deep/../../..", cwd + "/deep/../../../secret.txt"} {
				args := fillRequired(sc.Parameters)
				args[p] = value
				switch sc.Name {
				case "bash":
					args["command"] = "cat secret.txt; touch new.txt"
				case "grep":
					args["pattern"] = "SECRET"
				case "edit":
					args["old_string"], args["new_string"] = "TOP SECRET", "pwned"
				}
				before := fe.asked
				res := run(reg, s, sc.Name, jsonArgs(args))
				text := tools.JoinText(res.Content)
				switch {
				case fe.asked == before+1:
					asked[sc.Name] = true
					if texts := promptTexts(fe); !strings.Contains(texts, "Outside the project: "+out) {
						t.Errorf("%s %s=%q: the prompt says %q, want the real outside path", sc.Name, p, value, texts)
					}
				case fe.asked == before && res.IsError:
					// Refused before asking (a write or edit of a file not
					// read first, a folder given for a file): nothing ran.
				default:
					t.Errorf("%s %s=%q: asked %d times, error %v: %s", sc.Name, p, value, fe.asked-before, res.IsError, text)
				}
				if strings.Contains(text, "TOP SECRET") {
					t.Errorf("%s %s=%q read outside: %s", sc.Name, p, value, text)
				}
			}
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "TOP SECRET\n" {
		t.Errorf("secret.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(out, "new.txt")); err == nil {
		t.Error("new.txt was written outside")
	}
	for _, n := range []string{"bash", "glob", "grep", "read", "write"} {
		if !asked[n] {
			t.Errorf("%s never asked about an outside path", n)
		}
	}
	var names []string
	for n := range walked {
		names = append(names, n)
	}
	sort.Strings(names)
	if want := []string{"bash", "edit", "glob", "grep", "read", "write"}; !slices.Equal(names, want) {
		t.Errorf("walked %q (%v), want %q: a tool's path parameter was not found, or a new one is not judged here", names, walked, want)
	}
}
