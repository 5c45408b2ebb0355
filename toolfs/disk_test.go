package toolfs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/unpriv"
	"github.com/dsh-acp/dsh-acp/tools"
)

// edited reads rel, applies one edit and returns the result.
func (e *env) edited(rel, old, new string) tools.Result {
	e.t.Helper()
	e.ok("read", map[string]any{"file_path": rel})
	return e.ok("edit", map[string]any{"file_path": rel, "old_string": old, "new_string": new})
}

// wantDiffs checks a result's Meta diffs and location lines.
func wantDiffs(t *testing.T, r tools.Result, path string, diffs [][2]*string, lines []int) {
	t.Helper()
	m := meta(t, r)
	if len(m.Diffs) != len(diffs) || len(m.Locations) != len(lines) {
		t.Fatalf("meta %+v: want %d diffs and %d locations", m, len(diffs), len(lines))
	}
	for i, d := range m.Diffs {
		if d.Path != path || !eqp(d.OldText, diffs[i][0]) || d.NewText != *diffs[i][1] {
			t.Errorf("diff %d = {%q, %v, %q}, want {%q, %v, %q}", i, d.Path, show(d.OldText), d.NewText, path, show(diffs[i][0]), *diffs[i][1])
		}
	}
	for i, l := range m.Locations {
		if l.Path != path || l.Line != lines[i] {
			t.Errorf("location %d = %+v, want line %d of %s", i, l, lines[i], path)
		}
	}
}

func eqp(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func show(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestCRLF: an edit of a CRLF file changes one line and keeps CRLF (also
// in inserted lines); a mixed file keeps every byte outside the edit; fs
// case 10: a CRLF overwrite shows only the changed line.
func TestCRLF(t *testing.T) {
	e := newEnv(t)
	e.put("crlf.txt", "a\r\nb\r\nc\r\n")
	r := e.edited("crlf.txt", "b", "B")
	if got := e.get("crlf.txt"); got != "a\r\nB\r\nc\r\n" {
		t.Errorf("crlf.txt = %q", got)
	}
	wantDiffs(t, r, e.path("crlf.txt"), [][2]*string{{strp("a\nb\nc"), strp("a\nB\nc")}}, []int{2})
	// The model's old_string may use either ending; new lines get CRLF.
	e.ok("edit", map[string]any{"file_path": "crlf.txt", "old_string": "a\nB", "new_string": "a\nx\ny"})
	if got := e.get("crlf.txt"); got != "a\r\nx\r\ny\r\nc\r\n" {
		t.Errorf("crlf.txt = %q", got)
	}
	// Mixed endings: LF is the majority, the CRLF lines stay CRLF.
	e.put("mixed.txt", "one\r\ntwo\nthree\nfour\r\n")
	e.edited("mixed.txt", "two\nthree", "2\n3")
	if got := e.get("mixed.txt"); got != "one\r\n2\n3\nfour\r\n" {
		t.Errorf("mixed.txt = %q", got)
	}
	// A match across a CRLF pair replaces the pair.
	e.put("pair.txt", "k1\r\nk2\r\n")
	e.edited("pair.txt", "k1\r\nk2", "k12")
	if got := e.get("pair.txt"); got != "k12\r\n" {
		t.Errorf("pair.txt = %q", got)
	}
	// fs case 10: a CRLF overwrite of a CRLF file.
	e.put("w.txt", "a\r\nb\r\nc\r\n")
	e.ok("read", map[string]any{"file_path": "w.txt"})
	r = e.ok("write", map[string]any{"file_path": "w.txt", "content": "a\r\nB\r\nc\r\n"})
	wantDiffs(t, r, e.path("w.txt"), [][2]*string{{strp("a\nb\nc"), strp("a\nB\nc")}}, []int{2})
	if got := e.get("w.txt"); got != "a\r\nB\r\nc\r\n" {
		t.Errorf("write is byte for byte: %q", got)
	}
}

// TestBOMAndFinalNewline: a BOM and a missing final newline survive an
// edit; old_string matches at the start of a BOM file.
func TestBOMAndFinalNewline(t *testing.T) {
	e := newEnv(t)
	e.put("bom.txt", "\ufeffhello\nworld\n")
	r := e.edited("bom.txt", "hello", "hi")
	if got := e.get("bom.txt"); got != "\ufeffhi\nworld\n" {
		t.Errorf("bom.txt = %q", got)
	}
	wantDiffs(t, r, e.path("bom.txt"), [][2]*string{{strp("\ufeffhello\nworld"), strp("\ufeffhi\nworld")}}, []int{1})
	e.put("bomcrlf.txt", "\ufeffa\r\nb\r\n")
	e.edited("bomcrlf.txt", "b", "c\nd")
	if got := e.get("bomcrlf.txt"); got != "\ufeffa\r\nc\r\nd\r\n" {
		t.Errorf("bomcrlf.txt = %q", got)
	}
	e.put("nofinal.txt", "a\nb")
	e.edited("nofinal.txt", "a", "x")
	if got := e.get("nofinal.txt"); got != "x\nb" {
		t.Errorf("nofinal.txt = %q", got)
	}
	e.ok("edit", map[string]any{"file_path": "nofinal.txt", "old_string": "b", "new_string": "y"})
	if got := e.get("nofinal.txt"); got != "x\ny" {
		t.Errorf("nofinal.txt = %q", got)
	}
}

// TestSymlinkKept: reads and writes go through a symlink to its target;
// the link stays a link, observations are shared by link and target.
func TestSymlinkKept(t *testing.T) {
	e := newEnv(t)
	e.put("real/config.txt", "mode=DEBUG\n")
	if err := os.Symlink("real/config.txt", e.path("link.txt")); err != nil {
		t.Fatal(err)
	}
	r := e.edited("link.txt", "DEBUG", "RELEASE")
	if fi, err := os.Lstat(e.path("link.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link.txt is no longer a symlink: %v %v", fi, err)
	}
	if got := e.get("real/config.txt"); got != "mode=RELEASE\n" {
		t.Errorf("target = %q", got)
	}
	// Diff paths and locations name the path the model used.
	wantDiffs(t, r, e.path("link.txt"), [][2]*string{{strp("mode=DEBUG"), strp("mode=RELEASE")}}, []int{1})
	// Observed through the link, edited through the target.
	e.ok("edit", map[string]any{"file_path": "real/config.txt", "old_string": "RELEASE", "new_string": "TEST"})
	e.ok("write", map[string]any{"file_path": "link.txt", "content": "mode=X\n"})
	if fi, _ := os.Lstat(e.path("link.txt")); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("write replaced the link")
	}
	if got := e.get("real/config.txt"); got != "mode=X\n" {
		t.Errorf("target = %q", got)
	}
	// A dangling link: creating through it creates its target.
	if err := os.Symlink("real/later.txt", e.path("dangling.txt")); err != nil {
		t.Fatal(err)
	}
	e.ok("write", map[string]any{"file_path": "dangling.txt", "content": "now\n"})
	if got := e.get("real/later.txt"); got != "now\n" {
		t.Errorf("dangling target = %q", got)
	}
	if fi, _ := os.Lstat(e.path("dangling.txt")); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("write replaced the dangling link")
	}
	assertNoTemp(t, e.dir)
}

// TestModeKept: permissions (also the executable bit) survive write and
// edit; a new file gets what the umask allows, as os.WriteFile does.
func TestModeKept(t *testing.T) {
	e := newEnv(t)
	for _, mode := range []os.FileMode{0o640, 0o755, 0o600} {
		p := e.put("m.sh", "echo hi\n")
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		e.edited("m.sh", "hi", "ho")
		e.ok("write", map[string]any{"file_path": "m.sh", "content": "echo x\n"})
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("mode %v became %v", mode, fi.Mode().Perm())
		}
	}
	e.ok("write", map[string]any{"file_path": "sub/dir/new.txt", "content": "x"})
	ref := filepath.Join(e.dir, "ref")
	if err := os.WriteFile(ref, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	got, _ := os.Stat(e.path("sub/dir/new.txt"))
	want, _ := os.Stat(ref)
	if got.Mode().Perm() != want.Mode().Perm() {
		t.Errorf("new file mode %v, want %v", got.Mode().Perm(), want.Mode().Perm())
	}
}

// TestOverwrite: an overwrite shows the old text, an identical overwrite
// leaves the file alone and says so, a create has no old text.
func TestOverwrite(t *testing.T) {
	e := newEnv(t)
	r := e.ok("write", map[string]any{"file_path": "notes.txt", "content": "hello world"})
	p := e.path("notes.txt")
	if want := "<path>" + p + "</path>\n<type>file</type>\n<content>\nCreated file\n</content>"; text(r) != want {
		t.Errorf("create text %q", text(r))
	}
	if m := meta(t, r); m.Op != OpCreate || m.Path != p || len(m.Diffs) != 0 || len(m.Locations) != 1 || m.Locations[0].Line != 1 {
		t.Errorf("create meta %+v", m)
	}
	e.put("notes.txt", "original contents\n")
	e.ok("read", map[string]any{"file_path": "notes.txt"})
	r = e.ok("write", map[string]any{"file_path": "notes.txt", "content": "replaced"})
	if want := "<path>" + p + "</path>\n<type>file</type>\n<content>\nUpdated file\n</content>"; text(r) != want {
		t.Errorf("update text %q", text(r))
	}
	wantDiffs(t, r, p, [][2]*string{{strp("original contents"), strp("replaced")}}, []int{1})
	// Identical: not rewritten (same inode, same mtime), meta unchanged.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)
	r = e.ok("write", map[string]any{"file_path": "notes.txt", "content": "replaced"})
	after, _ := os.Stat(p)
	if m := meta(t, r); m.Op != OpUnchanged || len(m.Diffs) != 0 || len(m.Locations) != 1 || m.Locations[0] != (tools.FileLocation{Path: p}) {
		t.Errorf("identical meta %+v", m)
	}
	if !after.ModTime().Equal(old) || after.Sys().(*syscall.Stat_t).Ino != before.Sys().(*syscall.Stat_t).Ino {
		t.Error("an identical write rewrote the file")
	}
}

// TestHunkLocations: two edits 30 lines apart give two hunks and two
// locations on the changed lines; a pure deletion points at the line after
// the removed block.
func TestHunkLocations(t *testing.T) {
	e := newEnv(t)
	content := numbered(100)
	content = strings.Replace(content, "line 20\n", "target\n", 1)
	content = strings.Replace(content, "line 50\n", "target\n", 1)
	e.put("f.txt", content)
	e.ok("read", map[string]any{"file_path": "f.txt"})
	r := e.ok("edit", map[string]any{"file_path": "f.txt", "old_string": "target", "new_string": "TARGET", "replace_all": true})
	p := e.path("f.txt")
	wantDiffs(t, r, p, [][2]*string{
		{strp("line 17\nline 18\nline 19\ntarget\nline 21\nline 22\nline 23"), strp("line 17\nline 18\nline 19\nTARGET\nline 21\nline 22\nline 23")},
		{strp("line 47\nline 48\nline 49\ntarget\nline 51\nline 52\nline 53"), strp("line 47\nline 48\nline 49\nTARGET\nline 51\nline 52\nline 53")},
	}, []int{20, 50})
	// The same through write.
	r = e.ok("write", map[string]any{"file_path": "f.txt", "content": strings.ReplaceAll(e.get("f.txt"), "TARGET", "t")})
	if m := meta(t, r); len(m.Locations) != 2 || m.Locations[0].Line != 20 || m.Locations[1].Line != 50 {
		t.Errorf("write locations %+v", m.Locations)
	}
	// Deleting lines 10-12: the location is the line now at 10.
	r = e.ok("edit", map[string]any{"file_path": "f.txt", "old_string": "line 10\nline 11\nline 12\n", "new_string": ""})
	if m := meta(t, r); len(m.Locations) != 1 || m.Locations[0].Line != 10 {
		t.Errorf("deletion locations %+v", m.Locations)
	}
	// An insertion after line 5: the location is the new line 6.
	r = e.ok("edit", map[string]any{"file_path": "f.txt", "old_string": "line 5\n", "new_string": "line 5\ninserted\n"})
	if m := meta(t, r); len(m.Locations) != 1 || m.Locations[0].Line != 6 {
		t.Errorf("insertion locations %+v", m.Locations)
	}
}

// TestWriteFailures: a failed write leaves the old file and no temporary
// file behind. The writes fail on file permissions, so the test runs in
// a child process as an unprivileged user (root writes anyway).
func TestWriteFailures(t *testing.T) {
	if !unpriv.InChild(t) {
		unpriv.Run(t)
		return
	}
	e := newEnv(t)
	p := e.put("ro/file.txt", "old\n")
	e.ok("read", map[string]any{"file_path": "ro/file.txt"})
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	r := e.call("write", map[string]any{"file_path": "ro/file.txt", "content": "new\n"})
	if !r.IsError || r.Error == nil || r.Error.Code != CodeIO || !strings.Contains(text(r), "permission denied") {
		t.Errorf("write of a read-only file: %q %+v", text(r), r.Error)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.path("ro"), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(e.path("ro"), 0o755) })
	r = e.call("edit", map[string]any{"file_path": "ro/file.txt", "old_string": "old", "new_string": "new"})
	if !r.IsError || r.Error == nil || r.Error.Code != CodeIO {
		t.Errorf("edit in a read-only directory: %q %+v", text(r), r.Error)
	}
	if got := e.get("ro/file.txt"); got != "old\n" {
		t.Errorf("file = %q", got)
	}
	assertNoTemp(t, e.dir)
}

// TestWriteAtomicFailures: a write that fails before its rename (here:
// the context ends, or the rename itself fails) leaves the target as it
// was and removes its temporary file.
func TestWriteAtomicFailures(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(target)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := writeAtomic(ctx, hostFS{}, target, []byte("new\n"), fi); err == nil {
		t.Error("writeAtomic with an ended context succeeded")
	}
	if b, _ := os.ReadFile(target); string(b) != "old\n" {
		t.Errorf("target = %q", b)
	}
	// Renaming over a non-empty directory fails.
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(context.Background(), hostFS{}, sub, []byte("new\n"), nil); err == nil {
		t.Error("writeAtomic over a directory succeeded")
	}
	assertNoTemp(t, dir)
}

// The kill test: a child process (this test binary, see TestMain) writes
// two large contents over one file in turn, forever; the parent kills it
// with SIGKILL while a temporary file is being written and finds the file
// wholly one content or the other.
const killEnv = "TOOLFS_KILL_CHILD"

// killSize is the size of each content, in bytes.
const killSize = 24 << 20

func killContent(c byte) []byte {
	b := bytes.Repeat([]byte{c, c, c, c, c, c, c, '\n'}, killSize/8)
	return b
}

// killChild is the child's loop; it never returns.
func killChild(target string) {
	contents := [][]byte{killContent('a'), killContent('b')}
	for i := 0; ; i++ {
		fi, err := os.Stat(target)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := writeAtomic(context.Background(), hostFS{}, target, contents[i%2], fi); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
}

func TestMain(m *testing.M) {
	if target := os.Getenv(killEnv); target != "" {
		killChild(target)
	}
	os.Exit(m.Run())
}

func TestKillMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 100 MB")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "big.txt")
	a, b := killContent('a'), killContent('b')
	if err := os.WriteFile(target, a, 0o644); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), killEnv+"="+target)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until a temporary file holds part of a content.
		deadline := time.Now().Add(30 * time.Second)
		seen := false
		for !seen && time.Now().Before(deadline) {
			entries, _ := os.ReadDir(dir)
			for _, en := range entries {
				if !strings.HasSuffix(en.Name(), ".dsh-tmp") {
					continue
				}
				if fi, err := en.Info(); err == nil && fi.Size() > 0 && fi.Size() < killSize {
					seen = true
				}
			}
			if !seen {
				time.Sleep(time.Millisecond)
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		if !seen {
			t.Fatalf("round %d: never saw a partly written temporary file; child: %v %s", round, err, stderr.String())
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: the child was not killed by SIGKILL: %v %s", round, err, stderr.String())
		}
		got, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("round %d: torn file: %d bytes, starting %q", round, len(got), got[:min(len(got), 16)])
		}
		// The killed write's temporary file stays behind, until the next
		// write to that directory: then it is gone.
		if n := countTemp(t, dir); n != 1 {
			t.Fatalf("round %d: %d temporary files after the kill, want 1", round, n)
		}
		fi, err := os.Stat(target)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeAtomic(context.Background(), hostFS{}, target, got, fi); err != nil {
			t.Fatal(err)
		}
		if n := countTemp(t, dir); n != 0 {
			t.Fatalf("round %d: %d temporary files left after the next write, want 0", round, n)
		}
	}
}

// countTemp counts writeAtomic's temporary files in dir.
func countTemp(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, en := range entries {
		if strings.HasSuffix(en.Name(), tempSuffix) {
			n++
		}
	}
	return n
}

// TestStaleTempFiles: the next write removes a temporary file whose
// writer is gone or that is older than staleAge, and leaves a live
// writer's fresh one alone.
func TestStaleTempFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A pid that is not running: a child that has exited.
	child := exec.Command("true")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(dir, fmt.Sprintf(".f.txt.%d.0123456789ab.dsh-tmp", child.ProcessState.Pid()))
	live := filepath.Join(dir, fmt.Sprintf(".f.txt.%d.0123456789ab.dsh-tmp", os.Getpid()))
	old := filepath.Join(dir, fmt.Sprintf(".g.txt.%d.ba9876543210.dsh-tmp", os.Getpid()))
	for _, p := range []string{dead, live, old} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * staleAge)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(target)
	if err := writeAtomic(context.Background(), hostFS{}, target, []byte("new\n"), fi); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{dead: false, live: true, old: false} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
