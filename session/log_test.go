package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// sampleEvents returns n logged events shaped like real turns: each turn
// has a user message, then steps of an assistant message with a tool
// call, the call and its result (about 1 KiB of text), and a final
// answer. The first turn has a title. Times step by 7 ms.
func sampleEvents(n int) []Event {
	var out []Event
	add := func(d Data) {
		if len(out) < n {
			out = append(out, Event{Seq: int64(len(out)), Time: 1700000000000 + 7*int64(len(out)), Data: d})
		}
	}
	result := strings.Repeat("     1\tpackage main // a line of a file the model read\n", 20)
	for turn := 1; len(out) < n; turn++ {
		add(TurnStart{Turn: turn})
		if turn == 1 {
			add(Title{Title: "Fix the failing test"})
		}
		add(UserMessage{Turn: turn, Content: []tools.Content{tools.Text(fmt.Sprintf("Please look at file %d and fix it.", turn))}})
		for step := 1; step <= 3; step++ {
			add(StepStart{Turn: turn, Step: step})
			id := fmt.Sprintf("call_%d_%d", turn, step)
			args := fmt.Sprintf(`{"file_path":"/work/project/src/file%d.go","offset":%d}`, step, step*10)
			add(AssistantMessage{Turn: turn, Step: step, Text: "Let me read the file.", Reasoning: strings.Repeat("thinking about it ", 12),
				ToolCalls: []ToolCallRef{{CallID: id, Name: "read", Arguments: args}}, FinishReason: "tool_calls", Usage: &Usage{PromptTokens: 1200, CompletionTokens: 80}})
			add(ToolCall{Turn: turn, Step: step, CallID: id, Name: "read", Arguments: args})
			add(ToolResult{Turn: turn, Step: step, CallID: id, Content: []tools.Content{tools.Text(result)}, Meta: json.RawMessage(`{"lines":20}`)})
			add(StepEnd{Turn: turn, Step: step})
		}
		add(StepStart{Turn: turn, Step: 4})
		add(AssistantMessage{Turn: turn, Step: 4, Text: "Fixed: the test passes now.", FinishReason: "stop"})
		add(StepEnd{Turn: turn, Step: 4})
		add(TurnEnd{Turn: turn, Reason: EndTurn})
	}
	return out
}

// writeLog logs events through a Store into a fresh state dir and returns
// the log's path.
func writeLog(t testing.TB, root string, events []Event) string {
	t.Helper()
	path := LogPath(root, "/work/project", "sess_1")
	l := NewLog(path, NewHeader("sess_1", "/work/project", 1700000000000))
	for _, ev := range events {
		if err := l.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLogRoundTrip: events logged through a Store read back equal, the
// file and its folder are owner-only, and the file is created on the
// first logged event only.
func TestLogRoundTrip(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state")
	path := LogPath(root, "/work/project", "sess_1")
	log := NewLog(path, NewHeader("sess_1", "/work/project", 1700000000000))
	st := NewLoggedStore(nil, log, nil)
	st.Emit(AssistantChunk{Text: "transient"})
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("log exists before the first logged event: %v", err)
	}
	for _, ev := range sampleEvents(43) { // two whole turns
		st.Emit(ev.Data)
		st.Emit(ToolProgress{CallID: "x", Progress: tools.Progress{Output: "live"}})
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	l, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.NeedsRepair() {
		t.Errorf("a clean log needs repair: keep %d of %d, synthetic %d", l.Keep, len(l.data), l.Synthetic)
	}
	if want := st.Events(); !reflect.DeepEqual(l.Events, want) {
		t.Errorf("read back %d events, want %d; first difference at %d", len(l.Events), len(want), firstDiff(l.Events, want))
	}
	if !reflect.DeepEqual(l.Header, NewHeader("sess_1", "/work/project", 1700000000000)) {
		t.Errorf("header = %+v", l.Header)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", p, got, want)
		}
	}
	data, _ := os.ReadFile(path)
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if want := `{"type":"session","version":0,"id":"sess_1","createdAt":1700000000000,"cwd":"/work/project"}`; string(first) != want {
		t.Errorf("header line = %s\nwant %s", first, want)
	}
	if n := bytes.Count(data, []byte("\n")); n != 44 {
		t.Errorf("%d lines, want 44 (header and 43 events)", n)
	}
	if bytes.Contains(data, []byte("transient")) || bytes.Contains(data, []byte("live")) {
		t.Error("a transient event was logged")
	}
	// While the first Log holds the file, opening it again is refused
	// (one writer per log); once closed, appending after a load continues
	// the file.
	var locked *LockedError
	if _, err := l.Open(); !errors.As(err, &locked) || locked.PID != os.Getpid() {
		t.Fatalf("opening a held log: %v, want a LockedError naming pid %d", err, os.Getpid())
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	log2, err := l.Open()
	if err != nil {
		t.Fatal(err)
	}
	st2 := NewLoggedStore(l.Events, log2, nil)
	if ev := st2.Emit(TurnStart{Turn: 99}); ev.Seq != 43 {
		t.Errorf("seq after load = %d, want 43", ev.Seq)
	}
	st2.Close()
	l2, err := ReadLog(path)
	if err != nil || len(l2.Events) != 45 || l2.Synthetic != 1 {
		t.Fatalf("after an append: %v, %d events", err, len(l2.Events))
	}
}

func firstDiff(a, b []Event) int {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestEncodeID: safe ids are kept, everything else is escaped per UTF-16
// unit, and "." / ".." cannot name a folder.
func TestEncodeID(t *testing.T) {
	for in, want := range map[string]string{
		"sess_0123abcDEF-x.y": "sess_0123abcDEF-x.y",
		".":                   "~002e",
		"..":                  "~002e~002e",
		"a/b":                 "a~002fb",
		"~":                   "~007e",
		"é😀":                  "~00e9~d83d~de00",
		"":                    "",
	} {
		if got := encodeID(in); got != want {
			t.Errorf("encodeID(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := LogPath("/s", "/w", "a/b"), "/s/cwd-"+cwdDir("/w")[4:]+"/a~002fb.jsonl"; got != want {
		t.Errorf("LogPath = %q, want %q", got, want)
	}
	if d := cwdDir("/w"); len(d) != len("cwd-")+12 {
		t.Errorf("cwdDir = %q, want 12 hex digits", d)
	}
	if d := cwdDir(""); d != "_no-cwd" {
		t.Errorf("cwdDir(\"\") = %q", d)
	}
}

// TestTornLastLine cuts the log inside its last line at every byte
// offset: each cut loads, drops the torn line, closes the open turn, and
// Open backs the cut file up before rewriting it.
func TestTornLastLine(t *testing.T) {
	events := sampleEvents(22) // one whole turn
	full, err := os.ReadFile(writeLog(t, t.TempDir(), events))
	if err != nil {
		t.Fatal(err)
	}
	lastStart := bytes.LastIndexByte(full[:len(full)-1], '\n') + 1
	dir := t.TempDir()
	for cut := lastStart; cut <= len(full); cut++ {
		path := filepath.Join(dir, fmt.Sprintf("cut%d.jsonl", cut))
		if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := ReadLog(path)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		kept := 21
		if cut == len(full) {
			kept = 22
		}
		if !reflect.DeepEqual(l.Events[:kept], events[:kept]) {
			t.Fatalf("cut at %d: the kept events differ", cut)
		}
		if got := len(l.Events) - l.Synthetic; got != kept {
			t.Fatalf("cut at %d: kept %d events, want %d", cut, got, kept)
		}
		if cut == len(full) {
			if l.NeedsRepair() {
				t.Fatal("the whole log needs repair")
			}
			continue
		}
		if l.Dropped() != int64(cut-lastStart) {
			t.Errorf("cut at %d: dropped %d bytes, want %d", cut, l.Dropped(), cut-lastStart)
		}
		if l.Synthetic != 1 || !reflect.DeepEqual(l.Events[21].Data, TurnEnd{Turn: 1, Reason: EndInterrupted}) {
			t.Errorf("cut at %d: repair added %d events, want one interrupted turn/end", cut, l.Synthetic)
		}
		if _, err := l.Open(); err != nil {
			t.Fatalf("cut at %d: Open: %v", cut, err)
		}
		backup, err := os.ReadFile(l.Backup)
		if err != nil || !bytes.Equal(backup, full[:cut]) {
			t.Fatalf("cut at %d: backup %q differs from the cut log (%v)", cut, l.Backup, err)
		}
		again, err := ReadLog(path)
		if err != nil || again.NeedsRepair() || !reflect.DeepEqual(again.Events, l.Events) {
			t.Fatalf("cut at %d: the repaired log reads back differently (%v)", cut, err)
		}
	}
}

// TestRepairSequence: an open turn with an unanswered tool/call, a call
// only listed in the assistant message, an answered call and an open step
// is closed with the reference's synthetic events.
func TestRepairSequence(t *testing.T) {
	var evs []Event
	add := func(d Data) {
		evs = append(evs, Event{Seq: int64(len(evs)), Time: 1000 + int64(len(evs)), Data: d})
	}
	add(TurnStart{Turn: 1})
	add(TurnEnd{Turn: 1, Reason: EndTurn})
	add(TurnStart{Turn: 2})
	add(UserMessage{Turn: 2, Content: []tools.Content{tools.Text("go")}})
	add(StepStart{Turn: 2, Step: 1})
	add(AssistantMessage{Turn: 2, Step: 1, ToolCalls: []ToolCallRef{{CallID: "a", Name: "read"}, {CallID: "b", Name: "bash"}, {CallID: "c", Name: "edit"}}})
	add(ToolCall{Turn: 2, Step: 1, CallID: "a", Name: "read"})
	add(ToolResult{Turn: 2, Step: 1, CallID: "a", Content: []tools.Content{tools.Text("ok")}})
	add(ToolCall{Turn: 2, Step: 1, CallID: "b", Name: "bash"})
	got := Repair(evs)
	errInfo := &tools.ErrorInfo{Name: "InterruptedError", Code: "interrupted"}
	text := []tools.Content{tools.Text("Tool call interrupted by a crash; no result was recorded.")}
	want := append(append([]Event(nil), evs...),
		Event{Seq: 9, Time: 1008, Data: ToolResult{Turn: 2, Step: 1, CallID: "b", Content: text, IsError: true, Error: errInfo, SourceEventSeqs: []int64{8}}},
		Event{Seq: 10, Time: 1008, Data: ToolResult{Turn: 2, Step: 1, CallID: "c", Content: text, IsError: true, Error: errInfo, SourceEventSeqs: []int64{5}}},
		Event{Seq: 11, Time: 1008, Data: StepEnd{Turn: 2, Step: 1}},
		Event{Seq: 12, Time: 1008, Data: TurnEnd{Turn: 2, Reason: EndInterrupted}},
	)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got[9:], "", " ")
		t.Errorf("repair =\n%s", g)
	}
	// Closed logs, an empty log, and a turn open with no step.
	if closed := evs[:2]; len(Repair(closed)) != 2 {
		t.Error("a closed log was repaired")
	}
	if len(Repair(nil)) != 0 {
		t.Error("an empty log was repaired")
	}
	short := Repair(evs[:4])
	if len(short) != 5 || !reflect.DeepEqual(short[4].Data, TurnEnd{Turn: 2, Reason: EndInterrupted}) {
		t.Errorf("turn without step: %+v", short[4:])
	}
	// The repair survives the file round trip.
	path := writeLog(t, t.TempDir(), evs)
	l, err := ReadLog(path)
	if err != nil || l.Synthetic != 4 || !reflect.DeepEqual(l.Events, want) {
		t.Fatalf("ReadLog: %v, synthetic %d", err, l.Synthetic)
	}
	if _, err := l.Open(); err != nil {
		t.Fatal(err)
	}
	again, err := ReadLog(path)
	if err != nil || again.NeedsRepair() || !reflect.DeepEqual(again.Events, want) {
		t.Fatalf("after Open: %v", err)
	}
}

// TestCorruptLog: bad headers and bad lines before the last one make the
// log unloadable with the line named; the file is left alone.
func TestCorruptLog(t *testing.T) {
	good, err := os.ReadFile(writeLog(t, t.TempDir(), sampleEvents(6)))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	cases := map[string]struct {
		data string
		line int
	}{
		"empty":          {"", 1},
		"torn header":    {lines[0][:10], 1},
		"not json":       {"hello\n" + strings.Join(lines[1:], ""), 1},
		"wrong type":     {`{"type":"other","version":0,"id":"x"}` + "\n", 1},
		"version 1":      {`{"type":"session","version":1,"id":"x"}` + "\n", 1},
		"no id":          {`{"type":"session","version":0}` + "\n", 1},
		"garbage line 3": {lines[0] + lines[1] + "{oops\n" + strings.Join(lines[3:], ""), 3},
		"seq gap":        {lines[0] + lines[1] + strings.Join(lines[3:], ""), 3},
		"unknown event":  {lines[0] + `{"type":"nope","seq":0,"time":1,"data":{}}` + "\n" + strings.Join(lines[2:], ""), 2},
		"blank line":     {lines[0] + "\n" + strings.Join(lines[1:], ""), 2},
	}
	dir := t.TempDir()
	for name, c := range cases {
		path := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(path, []byte(c.data), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadLog(path)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Line != c.line {
			t.Errorf("%s: err = %v, want a CorruptError at line %d", name, err, c.line)
		}
		if data, _ := os.ReadFile(path); string(data) != c.data {
			t.Errorf("%s: the file was changed", name)
		}
	}
	if _, err := ReadLog(filepath.Join(dir, "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// A header with a torn first event is an empty session.
	path := filepath.Join(dir, "header-only.jsonl")
	os.WriteFile(path, []byte(lines[0]+lines[1][:5]), 0o600)
	if l, err := ReadLog(path); err != nil || len(l.Events) != 0 || l.Dropped() != 5 {
		t.Errorf("header and a torn event: %v", err)
	}
}

// TestListAndFind: sessions are listed newest first with their titles,
// filtered by cwd; broken logs and backups are skipped.
func TestListAndFind(t *testing.T) {
	root := t.TempDir()
	if infos, err := List(filepath.Join(root, "missing"), ""); err != nil || len(infos) != 0 {
		t.Fatalf("missing root: %v, %v", infos, err)
	}
	mk := func(id, cwd, title string, mtime int64) {
		l := NewLog(LogPath(root, cwd, id), NewHeader(id, cwd, 5))
		l.Append(Event{Seq: 0, Time: 1, Data: TurnStart{Turn: 1}})
		if title != "" {
			l.Append(Event{Seq: 1, Time: 1, Data: Title{Title: title}})
		}
		l.Close()
		tm := time.UnixMilli(mtime)
		os.Chtimes(l.Path(), tm, tm)
	}
	mk("old", "/a", "Old one", 1000)
	mk("new", "/a", "New one", 3000)
	mk("other", "/b", "", 2000)
	mk("same-time", "/a", "Tie", 3000)
	os.WriteFile(filepath.Join(filepath.Dir(LogPath(root, "/a", "x")), "broken.jsonl"), []byte("{}\n"), 0o600)
	os.WriteFile(LogPath(root, "/a", "new")+".1.bak", []byte("{}\n"), 0o600)
	all, err := List(root, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range all {
		got = append(got, fmt.Sprintf("%s|%s|%s|%d|%d", in.ID, in.Cwd, in.Title, in.UpdatedAt, in.CreatedAt))
	}
	want := []string{"new|/a|New one|3000|5", "same-time|/a|Tie|3000|5", "other|/b||2000|5", "old|/a|Old one|1000|5"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("List = %q\nwant %q", got, want)
	}
	a, _ := List(root, "/a")
	if len(a) != 3 || a[2].ID != "old" {
		t.Errorf("List(/a) = %+v", a)
	}
	if p, err := Find(root, "other"); err != nil || p != LogPath(root, "/b", "other") {
		t.Errorf("Find = %q, %v", p, err)
	}
	if _, err := Find(root, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find(nope) = %v", err)
	}
}

// TestLogWriteError: a log that cannot be created keeps the store working
// and reports the error on Flush.
func TestLogWriteError(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o600)
	st := NewLoggedStore(nil, NewLog(filepath.Join(blocker, "x", "s.jsonl"), NewHeader("s", "/w", 1)), nil)
	if ev := st.Emit(TurnStart{Turn: 1}); ev.Seq != 0 {
		t.Errorf("seq = %d", ev.Seq)
	}
	st.Emit(TurnEnd{Turn: 1})
	if err := st.Flush(); err == nil {
		t.Error("Flush hid the write error")
	}
	if n := len(st.Events()); n != 2 {
		t.Errorf("%d events in memory, want 2", n)
	}
	l := NewLog(filepath.Join(t.TempDir(), "s.jsonl"), NewHeader("s", "/w", 1))
	l.Close()
	if err := l.Append(Event{Data: TurnStart{}}); !errors.Is(err, ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
}

// lockHolderEnv makes the test binary a child that holds one log's lock
// (see TestMain) until it is killed.
const lockHolderEnv = "SESSION_LOCK_HOLDER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(indexChurnEnv); spec != "" {
		os.Exit(runChurnChild(spec))
	}
	if path := os.Getenv(lockHolderEnv); path != "" {
		lock, err := Acquire(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("locked")
		for lock != nil {
			time.Sleep(time.Hour) // held until killed
		}
	}
	os.Exit(m.Run())
}

// TestLockAcrossProcesses: a log another live process holds cannot be
// opened or read for loading here (the error names its pid); when that
// process dies, even by SIGKILL, the kernel frees the lock.
func TestLockAcrossProcesses(t *testing.T) {
	path := writeLog(t, t.TempDir(), sampleEvents(5))
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), lockHolderEnv+"="+path)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("child: %q %v", line, err)
	}
	var locked *LockedError
	if _, err := ReadLogLocked(path); !errors.As(err, &locked) || locked.PID != child.Process.Pid {
		t.Fatalf("ReadLogLocked of a held log: %v, want a LockedError naming pid %d", err, child.Process.Pid)
	}
	if !strings.Contains(locked.Error(), fmt.Sprintf("pid %d", child.Process.Pid)) {
		t.Errorf("message %q does not name the pid", locked.Error())
	}
	l, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Open(); !errors.As(err, &locked) {
		t.Fatalf("Open of a held log: %v", err)
	}
	before, _ := os.ReadFile(path)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	ld, err := ReadLogLocked(path)
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	log, err := ld.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); !bytes.HasPrefix(after, before) {
		t.Error("the log lost bytes")
	}
}

// TestRepairRemovesStaleTemp: a repair's temporary file left by a crash
// is removed by the next repair of that log (which holds its lock).
func TestRepairRemovesStaleTemp(t *testing.T) {
	path := writeLog(t, t.TempDir(), sampleEvents(5)) // an open turn: needs repair
	stale := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-0123456789ab")
	if err := os.WriteFile(stale, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	ld, err := ReadLogLocked(path)
	if err != nil {
		t.Fatal(err)
	}
	if !ld.NeedsRepair() {
		t.Fatal("the log needs no repair; the test is wrong")
	}
	log, err := ld.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if _, err := os.Stat(stale); err == nil {
		t.Error("the stale temporary file is still there")
	}
	if tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp-*")); len(tmps) != 0 {
		t.Errorf("temporary files left: %q", tmps)
	}
}
