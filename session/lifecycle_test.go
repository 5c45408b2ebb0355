package session

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// typesOf lists the event types of events.
func typesOf(events []Event) []string {
	var out []string
	for _, ev := range events {
		out = append(out, ev.Data.EventType())
	}
	return out
}

// TestReadLogLazy: a clean log is read lazily (only the wanted events
// decoded, the store decodes the rest when asked, equal to ReadLog's);
// a log that needs repair, or has a line in a foreign shape, is read
// whole as ReadLog reads it.
func TestReadLogLazy(t *testing.T) {
	events := sampleEvents(190) // nine whole turns
	events = slices.Insert(events, 5, Event{Data: ModeChange{ModeID: "plan"}})
	for i := range events {
		events[i].Seq = int64(i)
	}
	path := writeLog(t, t.TempDir(), events)
	wantMode := func(typ string) bool { return typ == "mode/change" }
	ld, err := ReadLogLazy(path, wantMode)
	if err != nil {
		t.Fatal(err)
	}
	if !ld.Lazy || ld.Events != nil || len(ld.Selected) != 1 || ld.Selected[0].Data != (ModeChange{ModeID: "plan"}) || ld.Selected[0].Seq != 5 {
		t.Fatalf("lazy read: lazy %v, %d events, selected %+v", ld.Lazy, len(ld.Events), ld.Selected)
	}
	st := ld.NewStore(nil, nil)
	if st.Len() != len(events) {
		t.Errorf("Len before the decode = %d", st.Len())
	}
	if err := st.Ready(); err != nil {
		t.Fatal(err)
	}
	if got := st.Events(); !reflect.DeepEqual(got, events) {
		t.Errorf("decoded events differ at %d", firstDiff(got, events))
	}
	// EventsFrom of a lazy store decodes too, and counts the events
	// emitted before the decode.
	st = ld.NewStore(nil, nil)
	st.Emit(Title{Title: "t"})
	if got, n := st.EventsFrom(len(events) - 1); n != len(events)+1 || len(got) != 2 || got[0].Seq != int64(len(events)-1) || got[1].Data != (Title{Title: "t"}) {
		t.Errorf("EventsFrom(%d) of a lazy store = %+v, %d", len(events)-1, got, n)
	}

	data, _ := os.ReadFile(path)
	cases := map[string]string{
		"torn last line": string(data[:len(data)-5]),
		"open turn":      string(data) + `{"type":"turn/start","seq":191,"time":1,"data":{"turn":99}}` + "\n",
		"foreign shape":  string(data) + `{"seq":191,"type":"title/x","time":1,"data":{}}` + "\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.jsonl")
			os.WriteFile(p, []byte(text), 0o600)
			lazy, lerr := ReadLogLazy(p, wantMode)
			whole, werr := ReadLog(p)
			if (lerr == nil) != (werr == nil) {
				t.Fatalf("ReadLogLazy %v, ReadLog %v", lerr, werr)
			}
			if werr != nil {
				return
			}
			if lazy.Lazy || !reflect.DeepEqual(lazy.Events, whole.Events) || lazy.Synthetic != whole.Synthetic || lazy.Keep != whole.Keep {
				t.Errorf("lazy %v, %d events (synthetic %d), want %d (%d)", lazy.Lazy, len(lazy.Events), lazy.Synthetic, len(whole.Events), whole.Synthetic)
			}
			if len(lazy.Selected) != 1 {
				t.Errorf("selected %+v", lazy.Selected)
			}
		})
	}

	// A payload that does not decode, in a line of the right shape: the
	// lazy read succeeds, the store's decode reports the line.
	lines := strings.SplitAfter(string(data), "\n")
	lines[3] = strings.Replace(lines[3], `"data":{`, `"data":{"turn":"x",`, 1)
	p := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(p, []byte(strings.Join(lines, "")), 0o600)
	ld, err = ReadLogLazy(p, wantMode)
	if err != nil || !ld.Lazy {
		t.Fatalf("lazy read of a bad payload: %v", err)
	}
	st = ld.NewStore(nil, nil)
	var ce *CorruptError
	if err := st.Ready(); !errors.As(err, &ce) || ce.Line != 4 {
		t.Errorf("Ready = %v", err)
	}
	if got, n := st.EventsFrom(0); got != nil || n != 0 {
		t.Errorf("EventsFrom(0) of a store that could not decode = %d events, %d", len(got), n)
	}
	if ev := st.Emit(Title{Title: "x"}); ev.Seq != -1 || st.Events() != nil {
		t.Errorf("a store that could not decode kept %+v", ev)
	}
}

// TestForkEvents: the whole settled history, a cut at the user's
// prompt, at a tool step and at a turn's last answer, each closed as a
// turn; an unknown id.
func TestForkEvents(t *testing.T) {
	events := sampleEvents(44) // two whole turns (22 and 21 events), then a turn just started
	if got := typesOf(events[43:]); !reflect.DeepEqual(got, []string{"turn/start"}) {
		t.Fatalf("sample tail %q", got)
	}
	whole, ok := ForkEvents(events, "")
	if !ok || len(whole) != 43 {
		t.Errorf("whole fork: %d events", len(whole))
	}
	cases := []struct {
		id   string
		keep int      // events kept from the source
		tail []string // the closing events added
	}{
		{UserMessageID(1), 3, []string{"turn/end"}},
		{AssistantMessageID(1, 2), 13, []string{"turn/end"}},
		{AssistantMessageID(1, 4), 22, nil},
		{AssistantMessageID(2, 1), 29, []string{"turn/end"}},
	}
	for _, c := range cases {
		got, ok := ForkEvents(events, c.id)
		if !ok {
			t.Errorf("%s: not found", c.id)
			continue
		}
		if !reflect.DeepEqual(got[:c.keep], events[:c.keep]) || !reflect.DeepEqual(typesOf(got[c.keep:]), c.tail) {
			t.Errorf("%s: kept %d, tail %q", c.id, len(got), typesOf(got[min(c.keep, len(got)):]))
			continue
		}
		if c.tail != nil {
			end := got[len(got)-1]
			if end.Seq != int64(c.keep) || end.Data.(TurnEnd).Reason != EndForked {
				t.Errorf("%s: closing event %+v", c.id, end)
			}
		}
		if fixed := Repair(got); len(fixed) != len(got) {
			t.Errorf("%s: the fork needs repair", c.id)
		}
	}
	if _, ok := ForkEvents(events, "turn7-step1"); ok {
		t.Error("an unknown message id was found")
	}
	// A cut inside an open step gets its StepEnd.
	open := []Event{{Seq: 0, Data: TurnStart{Turn: 1}}, {Seq: 1, Data: StepStart{Turn: 1, Step: 1}},
		{Seq: 2, Data: AssistantMessage{Turn: 1, Step: 1, Text: "x"}}}
	got, _ := ForkEvents(open, AssistantMessageID(1, 1))
	if !reflect.DeepEqual(typesOf(got), []string{"turn/start", "step/start", "assistant/message", "step/end", "turn/end"}) {
		t.Errorf("cut in an open step: %q", typesOf(got))
	}
}

// TestDelete removes a log, its backups and a repair's temporary file,
// and nothing else.
func TestDelete(t *testing.T) {
	root := t.TempDir()
	path := writeLog(t, root, sampleEvents(10))
	dir := filepath.Dir(path)
	mine := []string{path + ".1700000000000.bak", path + ".1700000000001.bak", filepath.Join(dir, "."+filepath.Base(path)+".tmp-abc"), LockPath(path)}
	others := []string{filepath.Join(dir, "sess_10.jsonl"), path + ".x.bak", path + "2", filepath.Join(dir, "sess_1.jsonl.notes")}
	for _, p := range append(append([]string{}, mine...), others...) {
		os.WriteFile(p, []byte("x"), 0o600)
	}
	// Another holder of the lock: nothing is removed.
	held, err := Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	var le *LockedError
	if err := Delete(path); !errors.As(err, &le) {
		t.Fatalf("Delete of a held log = %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("a held log was removed: %v", err)
	}
	held.Release()
	if err := Delete(path); err != nil {
		t.Fatal(err)
	}
	for _, p := range append([]string{path}, mine...) {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range others {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if err := Delete(path); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete = %v", err)
	}
	if _, err := Find(root, "sess_1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find after Delete = %v", err)
	}
}

// TestAppendAll writes the header and the events in one go, readable
// back, and a closed log neither writes nor creates its file.
func TestAppendAll(t *testing.T) {
	root := t.TempDir()
	events := sampleEvents(43)
	h := NewHeader("f1", "/work/project", 1700000000000)
	h.AdditionalDirectories, h.ForkedFrom = []string{"/work/other"}, "sess_1"
	l := NewLog(LogPath(root, "/work/project", "f1"), h)
	if err := l.AppendAll(events); err != nil {
		t.Fatal(err)
	}
	l.Close()
	ld, err := ReadLog(l.Path())
	if err != nil || !reflect.DeepEqual(ld.Events, events) || !reflect.DeepEqual(ld.Header, h) {
		t.Fatalf("read back: %v, header %+v", err, ld.Header)
	}
	infos, _ := List(root, "")
	if len(infos) != 1 || !reflect.DeepEqual(infos[0].AdditionalDirectories, []string{"/work/other"}) {
		t.Errorf("List = %+v", infos)
	}
	never := NewLog(LogPath(root, "/work/project", "f2"), NewHeader("f2", "/work/project", 1))
	never.Close()
	if err := never.Append(Event{Data: Title{Title: "late"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v", err)
	}
	if _, err := os.Stat(never.Path()); !os.IsNotExist(err) {
		t.Error("a closed log created its file")
	}
}
