package session

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// TestLastUsage: the last usage event of a log, found from its end
// across blocks and a long line, none when the log has none or only
// beyond the 1 MiB it reads.
func TestLastUsage(t *testing.T) {
	first := ContextUsage{Turn: 1, Step: 1, Model: "m", Used: 10, Size: 100, Cost: &Cost{Amount: 0.25, Currency: "USD"}}
	last := ContextUsage{Turn: 2, Step: 1, Model: "m", Used: 20, Size: 100, Cost: &Cost{Amount: 0.5, Currency: "USD"}}
	big := ToolResult{Turn: 2, Step: 1, CallID: "c", Content: []tools.Content{tools.Text(strings.Repeat("x", 200<<10))}}
	cases := []struct {
		name   string
		events []Data
		want   *ContextUsage
	}{
		{"none", []Data{TurnStart{Turn: 1}, TurnEnd{Turn: 1, Reason: EndTurn}}, nil},
		{"last of two", []Data{first, TurnStart{Turn: 2}, last, TurnEnd{Turn: 2, Reason: EndTurn}}, &last},
		{"before a 200 KiB line", []Data{first, last, big, big, TurnEnd{Turn: 2, Reason: EndTurn}}, &last},
		{"first line of the file", []Data{last}, &last},
		{"beyond 1 MiB", []Data{last, big, big, big, big, big, big}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			l := NewLog(LogPath(root, "/p", "sess_u"), NewHeader("sess_u", "/p", 1))
			for i, d := range c.events {
				if err := l.Append(Event{Seq: int64(i), Time: 1, Data: d}); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			got, ok := LastUsage(l.Path())
			if c.want == nil {
				if ok {
					t.Errorf("found %+v", got)
				}
				return
			}
			if !ok || !reflect.DeepEqual(got, *c.want) {
				t.Errorf("LastUsage = %+v, %v; want %+v", got, ok, *c.want)
			}
		})
	}
	if _, ok := LastUsage(filepath.Join(t.TempDir(), "missing.jsonl")); ok {
		t.Error("a usage from a missing file")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, ok := LastUsage(filepath.Join(dir, "d.jsonl")); ok {
		t.Error("a usage from a directory")
	}
}

// BenchmarkLastUsage is session/list's cost per listed session for its
// _meta.usage: the last usage event of a log whose last turn ends with a
// 64 KiB tool result after it.
func BenchmarkLastUsage(b *testing.B) {
	root := b.TempDir()
	l := NewLog(LogPath(root, "/p", "sess_b"), NewHeader("sess_b", "/p", 1))
	res := ToolResult{Turn: 1, Step: 1, CallID: "c", Content: []tools.Content{tools.Text(strings.Repeat("y", 64<<10))}}
	for i := range 2000 {
		var d Data = TurnStart{Turn: i}
		switch i % 4 {
		case 1:
			d = ContextUsage{Turn: i, Step: 1, Used: int64(i), Size: 1 << 20, Cost: &Cost{Amount: float64(i), Currency: "USD"}}
		case 2:
			d = res
		}
		if err := l.Append(Event{Seq: int64(i), Time: 1, Data: d}); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if u, ok := LastUsage(l.Path()); !ok || u.Used != 1997 {
			b.Fatalf("%+v %v", u, ok)
		}
	}
}
