package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// cleanEvents is the longest prefix of sampleEvents(max) that ends at a
// turn's end: a log of it needs no repair.
func cleanEvents(max int) []Event {
	events := sampleEvents(max)
	for n := max; n > 0; n-- {
		if events = sampleEvents(n); events[n-1].Data.EventType() == "turn/end" {
			break
		}
	}
	return events
}

// TestLoadedEach: Each gives a lazily read log's events one by one, equal
// to what a whole read decodes, and stops at its callback's error; a bad
// payload in a line the lazy read did not decode is a *CorruptError naming
// the line; a log read whole (it needs repair) gives its Events.
func TestLoadedEach(t *testing.T) {
	events := cleanEvents(40)
	path := writeLog(t, t.TempDir(), events)
	whole, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	lazy, err := ReadLogLazy(path, func(string) bool { return false })
	if err != nil || !lazy.Lazy || lazy.Events != nil {
		t.Fatalf("lazy read: %v, lazy %v", err, lazy != nil && lazy.Lazy)
	}
	var got []Event
	if err := lazy.Each(func(ev Event) error { got = append(got, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, whole.Events) || len(got) != len(events) || len(got) < 10 {
		t.Fatalf("Each gave %d events, a whole read %d (equal %v)", len(got), len(whole.Events), reflect.DeepEqual(got, whole.Events))
	}
	stop := errors.New("stop")
	n := 0
	if err := lazy.Each(func(Event) error { n++; return map[bool]error{true: stop}[n == 3] }); err != stop || n != 3 {
		t.Errorf("Each went on after an error: %v after %d", err, n)
	}

	// A payload broken where only its envelope was checked.
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	lines[5] = strings.Replace(lines[5], `"data":{`, `"data":{"turn":"x",`, 1)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	lazy, err = ReadLogLazy(path, func(string) bool { return false })
	if err != nil || !lazy.Lazy {
		t.Fatalf("lazy read of the broken log: %v", err)
	}
	var ce *CorruptError
	if err := lazy.Each(func(Event) error { return nil }); !errors.As(err, &ce) || ce.Line != 6 {
		t.Errorf("Each over a bad payload: %v", err)
	}

	// A torn end: read whole, Each gives Events (the synthetic ones too).
	if err := os.WriteFile(path, append(data, `{"type":"turn/st`...), 0o600); err != nil {
		t.Fatal(err)
	}
	torn, err := ReadLogLazy(path, func(string) bool { return false })
	if err != nil || torn.Lazy {
		t.Fatalf("torn log: %v, lazy %v", err, torn != nil && torn.Lazy)
	}
	got = nil
	_ = torn.Each(func(ev Event) error { got = append(got, ev); return nil })
	if !reflect.DeepEqual(got, torn.Events) {
		t.Errorf("Each of a log read whole: %d events, Events %d", len(got), len(torn.Events))
	}
}

// TestLazyReadLongLines: a log whose lines are longer than the line
// reader's 64 KiB buffer (one of 100 KiB, one past maxKeptLine, and short
// ones between and after them) is read lazily as a whole read decodes it:
// the selected events, Each's events, the store's, the sizes kept.
func TestLazyReadLongLines(t *testing.T) {
	var events []Event
	add := func(d Data) { events = append(events, Event{Seq: int64(len(events)), Time: 1700000000000, Data: d}) }
	for turn, size := range []int{10, 100 << 10, 40, 2 << 20, 5} {
		add(TurnStart{Turn: turn + 1})
		add(ModeChange{ModeID: fmt.Sprintf("mode%d", turn)})
		add(ToolCall{Turn: turn + 1, Step: 1, CallID: fmt.Sprintf("c%d", turn), Name: "read", Arguments: `{"path":"a"}`})
		add(ToolResult{Turn: turn + 1, Step: 1, CallID: fmt.Sprintf("c%d", turn), Content: []tools.Content{tools.Text(strings.Repeat("x\ty\n", size/4))}})
		add(TurnEnd{Turn: turn + 1, Reason: EndTurn})
	}
	path := writeLog(t, t.TempDir(), events)
	whole, err := ReadLog(path)
	if err != nil || !reflect.DeepEqual(whole.Events, events) {
		t.Fatalf("whole read: %v", err)
	}
	for _, last := range []string{"tool/result", "turn/end"} { // the last line decoded by want or for itself
		want := func(typ string) bool { return typ == "mode/change" || typ == last }
		lazy, err := ReadLogLazy(path, want)
		if err != nil || !lazy.Lazy || lazy.NeedsRepair() || lazy.Keep != whole.Keep || lazy.Dropped() != 0 {
			t.Fatalf("lazy read: %v (lazy %v, keep %d of %d)", err, lazy != nil && lazy.Lazy, lazy.Keep, whole.Keep)
		}
		var selected []Event
		for _, ev := range events {
			if want(ev.Data.EventType()) {
				selected = append(selected, ev)
			}
		}
		if !reflect.DeepEqual(lazy.Selected, selected) {
			t.Errorf("selected %d events, want %d", len(lazy.Selected), len(selected))
		}
		var got []Event
		if err := lazy.Each(func(ev Event) error { got = append(got, ev); return nil }); err != nil || !reflect.DeepEqual(got, events) {
			t.Errorf("Each: %v, %d events differ at %d", err, len(got), firstDiff(got, events))
		}
		st := lazy.NewStore(nil, nil)
		if err := st.Ready(); err != nil || !reflect.DeepEqual(st.Events(), events) {
			t.Errorf("store: %v", err)
		}
	}

	// f fails while the decoding is batches ahead: Each returns f's
	// error, having called it no more.
	lazy, err := ReadLogLazy(path, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	stop, calls := errors.New("stop"), 0
	if err := lazy.Each(func(Event) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("Each after f's error: %v, %d calls", err, calls)
	}
	// A bad line past the first batches: f has every event before it.
	data, _ := os.ReadFile(path)
	bad := bytes.Replace(data, []byte(`"data":{"turn":5}`), []byte(`"data":{"turn":"5"}`), 1) // the last turn's start
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	calls = 0
	var ce *CorruptError
	if err := lazy.Each(func(Event) error { calls++; return nil }); !errors.As(err, &ce) || ce.Line != 22 || calls != 20 {
		t.Errorf("Each over a bad line 22: %v after %d events", err, calls)
	}
}
