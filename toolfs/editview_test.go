package toolfs

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// TestEditResultView: the result card an edit hands over live
// (Output.View, no round trip through Meta) is the one its PresentResult
// rebuilds from the logged Meta on replay, for one hunk, several, a
// change past MaxDiffBytes (hunks left out, a note) and a replace_all.
func TestEditResultView(t *testing.T) {
	big := strings.Repeat("x", MaxDiffBytes/2)
	for _, c := range []struct {
		name, before, old, new string
		all                    bool
	}{
		{"one hunk", "a\nb\nc\n", "b", "B", false},
		{"several", "a\nkey\nb\n" + strings.Repeat("filler\n", 20) + "key\nc\n", "key", "KEY", true},
		{"left out", big + "\nmid\n" + big + "\nmid\n" + big + "\n", "mid", "MID", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.put("f.txt", c.before)
			e.ok("read", map[string]any{"file_path": "f.txt"})
			args := map[string]any{"file_path": "f.txt", "old_string": c.old, "new_string": c.new, "replace_all": c.all}
			r := e.ok("edit", args)
			if r.View == nil {
				t.Fatal("no live view")
			}
			tool, _ := e.reg.Get("edit")
			replayed := tool.Resolve("call_1", "edit", mustJSON(args)).ResultView(tools.ResultInput{Content: r.Content, Meta: r.Meta})
			if !reflect.DeepEqual(r.View, replayed) {
				t.Errorf("live view %+v\nreplayed %+v", r.View, replayed)
			}
		})
	}
}
