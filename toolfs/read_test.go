package toolfs

import (
	"bytes"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// TestReadEnvelope: the envelope and footer of §5.1, on the fs-read fixture's
// file (fs case 1).
func TestReadEnvelope(t *testing.T) {
	e := newEnv(t)
	e.put("greeting.txt", "hello\n")
	r := e.ok("read", map[string]any{"file_path": "greeting.txt"})
	want := "<path>" + e.path("greeting.txt") + "</path>\n<type>file</type>\n<content>\n1: hello\n\n(End of file - total 1 lines)\n</content>"
	if text(r) != want {
		t.Errorf("got  %q\nwant %q", text(r), want)
	}
	if r.Meta != nil {
		t.Errorf("read has meta %s", r.Meta)
	}
}

// TestReadWindowGolden is the reference's fs-read-window example.
func TestReadWindowGolden(t *testing.T) {
	e := newEnv(t)
	words := []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	var b strings.Builder
	for _, w := range words {
		b.WriteString("line " + w + "\n")
	}
	e.put("ten.txt", b.String())
	r := e.ok("read", map[string]any{"file_path": "ten.txt", "offset": 5, "limit": 4})
	want := "<path>" + e.path("ten.txt") + "</path>\n<type>file</type>\n<content>\n" +
		"5: line five\n6: line six\n7: line seven\n8: line eight\n\n(Showing lines 5-8 of 10. Use offset=9 to continue.)\n</content>"
	if text(r) != want {
		t.Errorf("got  %q\nwant %q", text(r), want)
	}
}

// body returns the text between <content>\n and \n</content>.
func body(t *testing.T, r tools.Result) string {
	t.Helper()
	s := text(r)
	i := strings.Index(s, "<content>\n")
	j := strings.LastIndex(s, "\n</content>")
	if i < 0 || j < i {
		t.Fatalf("no envelope: %q", s)
	}
	return s[i+len("<content>\n") : j]
}

func TestReadLinesAndFooters(t *testing.T) {
	long := strings.Repeat("é", 2500)
	cases := []struct {
		name, content string
		args          map[string]any
		want          string
	}{
		{"empty file", "", nil, "(End of file - total 0 lines)"},
		{"blank line counts, trailing newline does not", "a\n\nb\n", nil, "1: a\n2: \n3: b\n\n(End of file - total 3 lines)"},
		{"no final newline", "a\nb", nil, "1: a\n2: b\n\n(End of file - total 2 lines)"},
		{"only a newline", "\n", nil, "1: \n\n(End of file - total 1 lines)"},
		{"one CR stripped per line", "a\r\nb\r\r\nc\r", nil, "1: a\n2: b\r\n3: c\n\n(End of file - total 3 lines)"},
		{"BOM not shown", "\ufeffhead\nx\n", nil, "1: head\n2: x\n\n(End of file - total 2 lines)"},
		{"more to read", numbered(5), map[string]any{"limit": 2}, "1: line 1\n2: line 2\n\n(Showing lines 1-2 of 5. Use offset=3 to continue.)"},
		{"offset to the end", numbered(5), map[string]any{"offset": 4}, "4: line 4\n5: line 5\n\n(End of file - total 5 lines)"},
		{"last line only", numbered(5), map[string]any{"offset": 5, "limit": 1}, "5: line 5\n\n(End of file - total 5 lines)"},
		{"line cut at 2000 runes", long + "\nnext\n", map[string]any{"limit": 1},
			"1: " + strings.Repeat("é", 2000) + truncSuffix + "\n\n(Showing lines 1-1 of 2. Use offset=2 to continue.)"},
		{"exactly 2000 runes", strings.Repeat("x", 2000) + "\r\n", nil, "1: " + strings.Repeat("x", 2000) + "\n\n(End of file - total 1 lines)"},
		{"2001 runes", strings.Repeat("x", 2001), nil, "1: " + strings.Repeat("x", 2000) + truncSuffix + "\n\n(End of file - total 1 lines)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.put("f.txt", c.content)
			args := map[string]any{"file_path": "f.txt"}
			for k, v := range c.args {
				args[k] = v
			}
			r := e.ok("read", args)
			if got := body(t, r); got != c.want {
				t.Errorf("body\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestReadByteCap: 1000-byte lines stop at the 51,200-byte cap: 1000 +
// 50 × 1001 bytes fit, the 52nd line does not.
func TestReadByteCap(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString(strings.Repeat("x", 1000) + "\n")
	}
	e.put("wide.txt", b.String())
	got := body(t, e.ok("read", map[string]any{"file_path": "wide.txt"}))
	lines := strings.Split(got, "\n")
	if n := len(lines) - 2; n != 51 {
		t.Errorf("%d lines shown, want 51", n)
	}
	if footer := lines[len(lines)-1]; footer != "(Output capped. Showing lines 1-51. Use offset=52 to continue.)" {
		t.Errorf("footer %q", footer)
	}
	// From line 60 the 41 lines left fit under the cap.
	got = body(t, e.ok("read", map[string]any{"file_path": "wide.txt", "offset": 60}))
	if !strings.HasSuffix(got, "(End of file - total 100 lines)") {
		t.Errorf("from offset 60: %q", got[len(got)-80:])
	}
}

// TestReadArgErrors is fs case 2.
func TestReadArgErrors(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", "a\n")
	for _, c := range []struct {
		args string
		msg  string
	}{
		{`{"file_path":"a.txt","offset":0}`, "offset must be a positive integer"},
		{`{"file_path":"a.txt","offset":1.5}`, "offset must be a positive integer"},
		{`{"file_path":"a.txt","offset":-2}`, "offset must be a positive integer"},
		{`{"file_path":"a.txt","limit":0}`, "limit must be a positive integer"},
		{`{"file_path":"a.txt","limit":-3}`, "limit must be a positive integer"},
		{`{"file_path":"a.txt","limit":99999}`, "limit must be less than or equal to 2000"},
		{`{"file_path":"   "}`, "file_path must be a non-empty string"},
		{`{"file_path":""}`, "file_path must be a non-empty string"},
	} {
		e.fail("read", c.args, tools.CodeInvalidArgs, c.msg)
	}
	// A value of the wrong type never reaches the tool.
	r := e.call("read", `{"file_path":"a.txt","offset":"5"}`)
	if !r.IsError || r.Error == nil || r.Error.Code != tools.CodeInvalidArgs || !strings.HasPrefix(text(r), "Error: invalid arguments: ") {
		t.Errorf("string offset: %+v %q", r.Error, text(r))
	}
}

func TestReadErrors(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", "one\ntwo\n")
	e.put("bin.dat", "abc\x00def")
	e.put("latin1.txt", "caf\xe9\n")
	if err := os.Mkdir(e.path("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.put("empty.txt", "")
	e.fail("read", map[string]any{"file_path": "missing.txt"}, CodeNotFound, `cannot read "`+e.path("missing.txt")+`": not found`)
	e.fail("read", map[string]any{"file_path": "dir"}, CodeNotRegularFile, `cannot read "`+e.path("dir")+`": not a regular file`)
	e.fail("read", map[string]any{"file_path": "bin.dat"}, CodeNotText, `cannot read "`+e.path("bin.dat")+`": binary file`)
	e.fail("read", map[string]any{"file_path": "latin1.txt"}, CodeNotText, `cannot read "`+e.path("latin1.txt")+`": invalid UTF-8 text`)
	e.fail("read", map[string]any{"file_path": "a.txt/x"}, CodeNotFound, `cannot resolve "`+e.path("a.txt/x")+`": a parent path segment is not a directory`)
	e.fail("read", map[string]any{"file_path": "a.txt", "offset": 3}, CodeNotFound, `offset 3 is out of range for "`+e.path("a.txt")+`" (2 lines)`)
	e.fail("read", map[string]any{"file_path": "empty.txt", "offset": 2}, CodeNotFound, `offset 2 is out of range for "`+e.path("empty.txt")+`" (0 lines)`)
	// An absolute path is used as is.
	r := e.ok("read", map[string]any{"file_path": e.path("a.txt")})
	if !strings.Contains(text(r), "2: two") {
		t.Errorf("absolute path: %q", text(r))
	}
	// A NUL byte past the first 8 KiB does not make a file binary for read.
	e.put("late-nul.txt", strings.Repeat("a", sniffLen)+"\x00\n")
	e.ok("read", map[string]any{"file_path": "late-nul.txt"})
}

// TestStreamMatchesWhole: the streaming window gives the same text, line
// count, hash and text verdict as the whole-file one, for contents with
// long lines, multibyte runes, CRs and BOMs, read in pieces of random
// sizes.
func TestStreamMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "é", "€", "😀", "\r", "\n", "\r\n", "\ufeff", " ", "xyz"}
	for round := 0; round < 300; round++ {
		var b []byte
		if rng.IntN(5) == 0 {
			b = append(b, bom...)
		}
		n := rng.IntN(60)
		for i := 0; i < n; i++ {
			p := pieces[rng.IntN(len(pieces))]
			reps := 1
			if rng.IntN(8) == 0 {
				reps = rng.IntN(3000)
			}
			b = append(b, strings.Repeat(p, reps)...)
		}
		if rng.IntN(10) == 0 {
			b = append(b, 0xff) // invalid UTF-8
		}
		if rng.IntN(10) == 0 && len(b) > 0 {
			b[rng.IntN(len(b))] = 0
		}
		offset := 1 + rng.IntN(5)
		limit := 1 + rng.IntN(MaxLines)
		if rng.IntN(3) == 0 {
			limit = 1 + rng.IntN(3)
		}
		wantProblem := textProblem(b)
		got, err := streamWindow(t.Context(), &choppy{b: b, rng: rng}, offset, limit)
		if err != nil {
			t.Fatal(err)
		}
		if got.problem != wantProblem {
			t.Fatalf("round %d: problem %q, want %q (content %q)", round, got.problem, wantProblem, b)
		}
		if wantProblem != "" {
			continue
		}
		wantBody, wantTotal := windowBytes(bytes.TrimPrefix(b, bom), offset, limit)
		if got.body != wantBody || got.total != wantTotal || got.sum != sumOf(b) {
			t.Fatalf("round %d (offset %d limit %d): stream (%d lines) %q\nwhole (%d lines) %q\nsum equal: %v",
				round, offset, limit, got.total, got.body, wantTotal, wantBody, got.sum == sumOf(b))
		}
	}
}

// choppy reads b in pieces of random sizes.
type choppy struct {
	b   []byte
	rng *rand.Rand
}

func (c *choppy) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.b), 1+c.rng.IntN(5000))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

// TestReadStreamsLargeFiles is fs case 3: files of 10 MiB or more, and of
// unknown size, are streamed; a streamed read keeps memory bounded.
func TestReadStreamsLargeFiles(t *testing.T) {
	for _, c := range []struct {
		size int64
		want bool
	}{{0, true}, {1, false}, {StreamThreshold - 1, false}, {StreamThreshold, true}, {StreamThreshold * 3, true}} {
		if got := streams(fakeInfo{size: c.size}); got != c.want {
			t.Errorf("streams(size %d) = %v, want %v", c.size, got, c.want)
		}
	}
	e := newEnv(t)
	// 12 MiB: a 6 MiB line, then 100k short lines.
	var b bytes.Buffer
	b.WriteString(strings.Repeat("z", 6<<20) + "\n")
	for b.Len() < 12<<20 {
		b.WriteString("short line\n")
	}
	lines := 1 + (b.Len()-(6<<20+1))/len("short line\n")
	if err := os.WriteFile(e.path("big.txt"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := e.ok("read", map[string]any{"file_path": "big.txt", "limit": 3})
	runtime.ReadMemStats(&after)
	want := "1: " + strings.Repeat("z", 2000) + truncSuffix + "\n2: short line\n3: short line\n\n(Showing lines 1-3 of " + itoa(lines) + ". Use offset=4 to continue.)"
	if got := body(t, r); got != want {
		t.Errorf("body %q…", got[len(got)-100:])
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
		t.Errorf("a streamed read of 12 MiB allocated %d bytes", alloc)
	}
	// Reading records the version: the file can be edited.
	e.ok("edit", map[string]any{"file_path": "big.txt", "old_string": "zzz\nshort", "new_string": "zzz\nfirst short"})
	// A regular file of unknown size (procfs) is read too.
	if _, err := os.Stat("/proc/self/status"); err == nil {
		r := e.ok("read", map[string]any{"file_path": "/proc/self/status", "limit": 1})
		if !strings.Contains(text(r), "1: Name:") {
			t.Errorf("/proc/self/status: %q", text(r))
		}
	}
}

type fakeInfo struct{ size int64 }

func (f fakeInfo) Name() string       { return "f" }
func (f fakeInfo) Size() int64        { return f.size }
func (f fakeInfo) Mode() fs.FileMode  { return 0o644 }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return false }
func (f fakeInfo) Sys() any           { return nil }
