package permission

import (
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// A command (or a path) whose text holds characters that do not show,
// or that reorder the text around them (bidi controls), reads on the
// card as something other than what runs: the request names them.
func TestExplainHiddenCharacters(t *testing.T) {
	cwd := t.TempDir()
	cmd := "echo \"safe\u202e\"; touch pwned; echo \"\u202c\""
	notes := Explain(ModeDefault, Call{Tool: "bash", Class: tools.ClassExecute, Command: cmd, Cwd: cwd})
	var texts []string
	for _, n := range notes {
		texts = append(texts, n.Text)
	}
	all := strings.Join(texts, "\n")
	if !strings.Contains(all, "U+202E") || !strings.Contains(all, "U+202C") {
		t.Errorf("notes for %q: %q", cmd, all)
	}
	path := cwd + "/invoice\u202etxt.sh"
	notes = Explain(ModeDefault, Call{Tool: "write", Class: tools.ClassEdit, Paths: []string{path}, Cwd: cwd})
	if len(notes) != 1 || !strings.Contains(notes[0].Text, "U+202E") {
		t.Errorf("notes for %q: %+v", path, notes)
	}
	for _, plain := range []string{"echo héllo\tworld\nls", "grep -r 日本 ."} {
		if n := Explain(ModeDefault, Call{Tool: "bash", Class: tools.ClassExecute, Command: plain, Cwd: cwd}); len(n) != 0 {
			t.Errorf("notes for %q: %+v", plain, n)
		}
	}
}
