package bridge

import (
	"errors"
	"reflect"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
)

// TestPageSessions walks a list in pages: every session once, in order;
// a cursor stays valid when sessions before it go away; a foreign cursor
// is -32602.
func TestPageSessions(t *testing.T) {
	infos := []session.Info{{ID: "e", UpdatedAt: 50}, {ID: "c", UpdatedAt: 40}, {ID: "d", UpdatedAt: 40}, {ID: "b", UpdatedAt: 20}, {ID: "a", UpdatedAt: 10}}
	var got []string
	cursor, pages := "", 0
	for {
		page, next, err := pageSessions(infos, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, in := range page {
			got = append(got, in.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if want := []string{"e", "c", "d", "b", "a"}; !reflect.DeepEqual(got, want) || pages != 3 {
		t.Errorf("pages gave %q in %d pages", got, pages)
	}
	first, next, _ := pageSessions(infos, "", 3)
	if len(first) != 3 || next == "" {
		t.Fatalf("first page %v, next %q", first, next)
	}
	// "c" is updated (moves to the front) and "e" deleted: the rest
	// after "d" is unchanged.
	moved := []session.Info{{ID: "c", UpdatedAt: 60}, {ID: "b", UpdatedAt: 20}, {ID: "a", UpdatedAt: 10}}
	rest, last, _ := pageSessions(moved, next, 3)
	if len(rest) != 2 || rest[0].ID != "b" || last != "" {
		t.Errorf("after changes: %v, next %q", rest, last)
	}
	if all, next, _ := pageSessions(infos, "", 50); len(all) != 5 || next != "" {
		t.Errorf("one page: %d sessions, next %q", len(all), next)
	}
	if none, next, err := pageSessions(nil, "", 50); len(none) != 0 || next != "" || err != nil {
		t.Errorf("empty: %v %q %v", none, next, err)
	}
	for _, bad := range []string{"!!", "bm9zbGFzaA", "eC95"} { // not base64; "noslash"; "x/y"
		_, _, err := pageSessions(infos, bad, 2)
		var ae *acp.Error
		if !errors.As(err, &ae) || ae.Code != acp.CodeInvalidParams {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}
