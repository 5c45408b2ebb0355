package present

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
)

// TestUpdatesKeepTheirValues: updates returned earlier are not changed by
// later events (each card has its own storage), and paths resolve right
// while more paths than the abs memo holds rotate through it.
func TestUpdatesKeepTheirValues(t *testing.T) {
	p := NewPresenter(View{Cwd: "/proj", LineBase: 1}, fakeTools())
	type kept struct {
		us   []acp.Update
		json string
	}
	var all []kept
	keep := func(ev session.Event) []acp.Update {
		us := p.Updates(ev)
		b, err := json.Marshal(us)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, kept{us, string(b)})
		return us
	}
	for i := range 12 {
		path := fmt.Sprintf("dir/f%d.go", i%7)
		id := fmt.Sprintf("c%d", i)
		tool, args := "read", fmt.Sprintf(`{"path":%q,"line":%d}`, path, i+1)
		if i%2 == 1 {
			tool, args = "edit", fmt.Sprintf(`{"path":%q,"new":"v%d","loc":true}`, path, i)
		}
		us := keep(session.Event{Data: call(id, tool, args)})
		if i%3 == 0 {
			// Interleave another call's events.
			keep(session.Event{Data: call("x"+id, "read", `{"path":"/abs/x.go","line":2}`)})
			keep(session.Event{Data: result("x"+id, "x")})
		}
		rs := keep(session.Event{Data: result(id, "done")})
		want := `"/proj/` + path + `"`
		for _, u := range [][]acp.Update{us, rs} {
			locs, titled := cardLocations(u)
			if len(locs) != 1 || !titled {
				t.Fatalf("call %d: updates %+v", i, u)
			}
			if got, _ := json.Marshal(locs[0].Path); string(got) != want {
				t.Errorf("call %d: location %s, want %s", i, got, want)
			}
		}
		if locs, _ := cardLocations(us); tool == "read" && *locs[0].Line != i+1 {
			t.Errorf("call %d: line %d, want %d", i, *locs[0].Line, i+1)
		}
	}
	for i, k := range all {
		b, _ := json.Marshal(k.us)
		if string(b) != k.json {
			t.Errorf("update list %d changed after it was returned:\n was %s\n now %s", i, k.json, b)
		}
		if !strings.Contains(k.json, `"path":"/`) {
			t.Errorf("update list %d has no absolute path: %s", i, k.json)
		}
	}
}

// cardLocations is the locations of a one-card update list, and whether
// the card has a title.
func cardLocations(us []acp.Update) ([]acp.ToolCallLocation, bool) {
	if len(us) != 1 {
		return nil, false
	}
	switch u := us[0].(type) {
	case acp.ToolCall:
		return u.Locations, u.Title != ""
	case acp.ToolCallUpdate:
		return u.Locations, u.Title != nil
	default:
		// Not a card: no locations, no title.
		return nil, false
	}
}
