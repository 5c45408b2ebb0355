package session

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestLazyStoreRereads: a lazily read log's store decodes its events from
// the file, read again in chunks (rereadChunk made small here, so there
// are many), equal to a whole read, with the events the store emitted
// since kept after them; a log whose read part changed in between (a
// payload broken, a line cut off) makes Ready a *CorruptError naming the
// line.
func TestLazyStoreRereads(t *testing.T) {
	events := cleanEvents(300)
	defer func(n int) { rereadChunk = n }(rereadChunk)
	rereadChunk = 1024
	path := writeLog(t, t.TempDir(), events)
	whole, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	open := func() *Store {
		lazy, err := ReadLogLazy(path, func(string) bool { return false })
		if err != nil || !lazy.Lazy {
			t.Fatalf("lazy read: %v", err)
		}
		return lazy.NewStore(nil, nil)
	}
	st := open()
	extra := st.Emit(TurnStart{Turn: 999})
	if err := st.Ready(); err != nil {
		t.Fatal(err)
	}
	got := st.Events()
	if len(got) != len(whole.Events)+1 || !reflect.DeepEqual(got[:len(got)-1], whole.Events) || got[len(got)-1].Seq != extra.Seq || len(got) < 100 {
		t.Fatalf("store gave %d events, a whole read %d", len(got), len(whole.Events))
	}

	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	for _, tc := range []struct {
		name     string
		change   func() string
		wantLine int
	}{
		{"a line changed", func() string {
			c := append([]string(nil), lines...)
			c[150] = strings.Replace(c[150], `"seq":149,`, `"seq":148,`, 1)
			return strings.Join(c, "")
		}, 151},
		{"cut short", func() string { return strings.Join(lines[:200], "") }, 201},
	} {
		st := open()
		if err := os.WriteFile(path, []byte(tc.change()), 0o600); err != nil {
			t.Fatal(err)
		}
		var ce *CorruptError
		if err := st.Ready(); !errors.As(err, &ce) || ce.Line != tc.wantLine {
			t.Errorf("%s: Ready = %v, want a *CorruptError at line %d", tc.name, err, tc.wantLine)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
