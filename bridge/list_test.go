package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

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
		page, next, err := pageSessions(sliceLister(infos), cursor, 2)
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
	first, next, _ := pageSessions(sliceLister(infos), "", 3)
	if len(first) != 3 || next == "" {
		t.Fatalf("first page %v, next %q", first, next)
	}
	// "c" is updated (moves to the front) and "e" deleted: the rest
	// after "d" is unchanged.
	moved := []session.Info{{ID: "c", UpdatedAt: 60}, {ID: "b", UpdatedAt: 20}, {ID: "a", UpdatedAt: 10}}
	rest, last, _ := pageSessions(sliceLister(moved), next, 3)
	if len(rest) != 2 || rest[0].ID != "b" || last != "" {
		t.Errorf("after changes: %v, next %q", rest, last)
	}
	if all, next, _ := pageSessions(sliceLister(infos), "", 50); len(all) != 5 || next != "" {
		t.Errorf("one page: %d sessions, next %q", len(all), next)
	}
	if none, next, err := pageSessions(sliceLister(nil), "", 50); len(none) != 0 || next != "" || err != nil {
		t.Errorf("empty: %v %q %v", none, next, err)
	}
	for _, bad := range []string{"!!", "bm9zbGFzaA", "eC95"} { // not base64; "noslash"; "x/y"
		_, _, err := pageSessions(sliceLister(infos), bad, 2)
		var ae *acp.Error
		if !errors.As(err, &ae) || ae.Code != acp.CodeInvalidParams {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}

// sliceLister pages through infos, already in list order (what
// session.Index.Page does over the logs).
func sliceLister(infos []session.Info) lister {
	return func(after func(session.Info) bool, n int) ([]session.Info, bool, error) {
		start := 0
		for after != nil && start < len(infos) && !after(infos[start]) {
			start++
		}
		rest := infos[start:]
		if len(rest) > n {
			return rest[:n], true, nil
		}
		return rest, false, nil
	}
}

// TestListPagesWhileLogsChange pages through `session/list` over 130
// logged sessions while, between the pages, a session is created, one
// not yet shown is deleted, one not yet shown grows (and so moves ahead
// of the cursor), one already shown grows, and one not yet shown grows a
// title without moving. Every page equals what paging over a full read
// of the logs at that moment gives; no session is shown twice.
func TestListPagesWhileLogsChange(t *testing.T) {
	root := t.TempDir()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(minutes float64) time.Time { return base.Add(time.Duration(minutes * float64(time.Minute))) }
	write := func(id string, mtime time.Time, title string) string {
		t.Helper()
		path := session.LogPath(root, "/w", id)
		l := session.NewLog(path, session.NewHeader(id, "/w", base.UnixMilli()))
		l.Append(session.Event{Seq: 0, Time: 1, Data: session.TurnStart{Turn: 1}})
		if title != "" {
			l.Append(session.Event{Seq: 1, Time: 1, Data: session.Title{Title: title}})
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return path
	}
	grow := func(path string, mtime time.Time, title string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, `{"type":"session/title","seq":1,"time":1,"data":{"title":%q}}`+"\n", title)
		f.Close()
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	paths := map[string]string{}
	for i := range 130 {
		id := fmt.Sprintf("s%03d", i)
		paths[id] = write(id, at(float64(i)), "")
	}
	b := New(Config{StateDir: root})
	// page lists one page through the bridge and checks it against
	// paging over a full read.
	page := func(cursor string) ([]string, string) {
		t.Helper()
		got, err := b.ListSessions(context.Background(), acp.ListSessionsRequest{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		all, err := session.List(root, "")
		if err != nil {
			t.Fatal(err)
		}
		want, wantNext, _ := pageSessions(sliceLister(all), cursor, listPageSize)
		var ids, wantIDs []string
		for i, s := range got.Sessions {
			ids = append(ids, s.SessionID+"|"+s.Title)
			if i < len(want) && (s.UpdatedAt != time.UnixMilli(want[i].UpdatedAt).UTC().Format("2006-01-02T15:04:05.000Z")) {
				t.Errorf("%s: updatedAt %s, want %d", s.SessionID, s.UpdatedAt, want[i].UpdatedAt)
			}
		}
		for _, in := range want {
			wantIDs = append(wantIDs, in.ID+"|"+in.Title)
		}
		if !reflect.DeepEqual(ids, wantIDs) || got.NextCursor != wantNext {
			t.Fatalf("page after %q:\n got %q next %q\nwant %q next %q", cursor, ids, got.NextCursor, wantIDs, wantNext)
		}
		return ids, got.NextCursor
	}
	p1, next := page("")
	if len(p1) != 50 || p1[0] != "s129|" || p1[49] != "s080|" {
		t.Fatalf("first page %q", p1)
	}
	write("s-new", at(500), "New")         // newer than the cursor: not on later pages
	os.Remove(paths["s060"])               // not shown yet: gone from page 2
	grow(paths["s030"], at(600), "Moved")  // not shown yet, now the newest: skipped
	grow(paths["s100"], at(700), "Again")  // shown on page 1: not repeated
	grow(paths["s050"], at(55.5), "Title") // not shown yet, moves among the rest with its title
	p2, next := page(next)
	p3, last := page(next)
	if last != "" || len(p2) != 50 || len(p3) != 28 {
		t.Fatalf("pages 2 and 3: %d and %d sessions, last cursor %q", len(p2), len(p3), last)
	}
	seen := map[string]bool{}
	for _, id := range append(append(p1, p2...), p3...) {
		if seen[id] {
			t.Errorf("%s shown twice", id)
		}
		seen[id] = true
	}
	for _, id := range []string{"s-new|New", "s060|", "s030|", "s030|Moved", "s100|Again"} {
		if seen[id] {
			t.Errorf("%s shown after its change", id)
		}
	}
	if !seen["s050|Title"] || !seen["s029|"] || !seen["s000|"] {
		t.Errorf("pages 2 and 3 miss sessions: %q %q", p2, p3)
	}
	// A walk from the start shows the changes.
	if fresh, _ := page(""); !reflect.DeepEqual(fresh[:4], []string{"s100|Again", "s030|Moved", "s-new|New", "s129|"}) {
		t.Errorf("fresh first page starts %q", fresh[:4])
	}
}
