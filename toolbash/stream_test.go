package toolbash

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func fileSpill(t *testing.T) spillFunc {
	dir := t.TempDir()
	return func(name string) (*os.File, string, error) {
		p := filepath.Join(dir, name+".log")
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return f, p, err
	}
}

func TestTailBufKeepsLastBytes(t *testing.T) {
	tb := tailBuf{limit: 10}
	var all []byte
	for i := range 100 {
		chunk := bytes.Repeat([]byte{byte('a' + i%26)}, i%13)
		all = append(all, chunk...)
		tb.write(chunk)
		want := all[max(0, len(all)-10):]
		if !bytes.Equal(tb.bytes(), want) {
			t.Fatalf("after %d writes: %q, want %q", i+1, tb.bytes(), want)
		}
		if cap(tb.b) > 4096 {
			t.Fatalf("buffer grew to %d", cap(tb.b))
		}
	}
}

// TestStreamSpill: no spill file while the output fits; on the first
// overflow the whole output goes to a 0600 file; the tail starts at a
// character boundary.
func TestStreamSpill(t *testing.T) {
	s := newStream("stdout", 10, fileSpill(t), nil)
	s.write([]byte("0123456"))
	if _, cut, path, _ := s.result(); cut || path != "" {
		t.Fatalf("cut %v path %q before any overflow", cut, path)
	}
	s.write([]byte("789é€x")) // 7+3+2+3+1 bytes = 16
	s.close()
	text, cut, path, _ := s.result()
	if !cut || path == "" {
		t.Fatalf("cut %v path %q after the overflow", cut, path)
	}
	// The last 10 bytes are "9é€x" preceded by "78" minus... check exact.
	all := "0123456789é€x"
	want := all[len(all)-10:]
	want = want[runeStartSkip([]byte(want)):]
	if string(text) != want || !utf8.Valid(text) {
		t.Errorf("tail %q, want %q", text, want)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != all {
		t.Errorf("spill file holds %q (%v), want %q", data, err, all)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("spill file mode %v", st.Mode().Perm())
	}
}

// TestStreamCutSplitsCharacter: when the cut point falls inside a
// character, the tail starts after it.
func TestStreamCutSplitsCharacter(t *testing.T) {
	s := newStream("stdout", 5, nil, nil)
	s.write([]byte("ab€€")) // 2 + 6 bytes; the last 5 start inside the first €
	s.close()
	text, cut, path, _ := s.result()
	if string(text) != "€" || !cut || path != "" {
		t.Errorf("result %q cut %v path %q", text, cut, path)
	}
}

// TestStreamReadNew: each read returns what came since the previous one;
// a character still arriving is left for the next read; data pushed out
// of memory is flagged.
func TestStreamReadNew(t *testing.T) {
	s := newStream("stdout", 8, nil, nil)
	s.write([]byte("ab"))
	if d, dropped, _ := s.readNew(); string(d) != "ab" || dropped {
		t.Fatalf("read 1 = %q %v", d, dropped)
	}
	if d, _, _ := s.readNew(); len(d) != 0 {
		t.Fatalf("read 2 = %q, want nothing", d)
	}
	s.write([]byte("c\xe2\x82"))
	if d, _, _ := s.readNew(); string(d) != "c" {
		t.Fatalf("read 3 = %q, want c (the € is incomplete)", d)
	}
	s.write([]byte("\xacd"))
	if d, _, _ := s.readNew(); string(d) != "€d" {
		t.Fatalf("read 4 = %q, want €d", d)
	}
	s.write([]byte("0123456789tail"))
	d, dropped, _ := s.readNew()
	if string(d) != "6789tail" || !dropped {
		t.Fatalf("read 5 = %q dropped %v", d, dropped)
	}
	s.write([]byte("\xe2"))
	s.close()
	if d, _, _ := s.readNew(); string(d) != "\xe2" {
		t.Fatalf("after close the held byte is returned as is: %q", d)
	}
}

// TestLossyReadText pins §10 bash #5: a lossy read with no spill file.
func TestLossyReadText(t *testing.T) {
	g := newRig(t)
	s := newStream("stdout", 4, nil, nil) // no spill function: unavailable
	s.write([]byte("dropped-tail"))
	p := &proc{out: [2]*stream{s, newStream("stderr", 4, nil, nil)}, done: make(chan struct{})}
	got := g.m.taskOutput(&task{id: "bash-9", p: p})
	want := "tail\n[some output was dropped from memory; full output: (unavailable)]\n[status: running]"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if strings.Contains(got, "dropped-") {
		t.Error("dropped bytes shown")
	}
}

// TestStreamSpillLimit: the two streams of a command share its spill
// limit: the file that outgrows it holds exactly the output's first bytes
// within it and then the line saying where it was cut and how much more
// came; the tail in memory is the output's end all the same; the result
// says the file holds only the start.
func TestStreamSpillLimit(t *testing.T) {
	budget := new(spillBudget)
	budget.Store(30)
	spill := fileSpill(t)
	out := newStream("stdout", 10, spill, budget)
	errs := newStream("stderr", 10, spill, budget)
	var all, allErr []byte
	for i := range 20 {
		chunk := bytes.Repeat([]byte{byte('a' + i)}, 3)
		out.write(chunk)
		all = append(all, chunk...)
		if i == 2 {
			errs.write([]byte("EEEEEEEEEEEE")) // 12 bytes: spills at once
			allErr = append(allErr, "EEEEEEEEEEEE"...)
		}
	}
	out.close()
	errs.close()
	text, cut, path, saved := out.result()
	if !cut || path == "" || string(text) != string(all[len(all)-10:]) {
		t.Fatalf("stdout: %q cut %v path %q", text, cut, path)
	}
	_, _, errPath, errSaved := errs.result()
	if errSaved != 0 {
		t.Errorf("stderr's file is whole, but saved = %d", errSaved)
	}
	if data, _ := os.ReadFile(errPath); string(data) != string(allErr) {
		t.Errorf("stderr's file %q", data)
	}
	// 30 - 12 bytes of stderr: stdout keeps 18.
	if saved != 18 {
		t.Errorf("stdout saved %d bytes, want 18", saved)
	}
	data, err := os.ReadFile(path)
	want := string(all[:18]) + cutLine(18, int64(len(all)))
	if err != nil || string(data) != want {
		t.Errorf("stdout's file holds %q (%v), want %q", data, err, want)
	}
	if !strings.Contains(want, "42 more bytes were not saved") {
		t.Errorf("cut line %q", want)
	}
	c := capture{stdout: string(text), stdoutCut: true, stdoutPath: path, stdoutSaved: saved}
	if got := resultText(c); !strings.HasSuffix(got, "\n[output truncated; its first 18 bytes (the spill limit): "+path+"]") {
		t.Errorf("result text %q", got)
	}
}
