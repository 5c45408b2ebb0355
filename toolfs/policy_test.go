package toolfs

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// TestEditNeedsRead is fs case 4: an edit without a read is refused; a
// windowed read is enough; write-then-edit and edit-then-edit need no
// re-read; a new file needs nothing.
func TestEditNeedsRead(t *testing.T) {
	e := newEnv(t)
	e.put("settings.txt", numbered(10))
	e.fail("edit", map[string]any{"file_path": "settings.txt", "old_string": "line 7", "new_string": "LINE 7"},
		CodeNotObserved, `edit requires reading "`+e.path("settings.txt")+`" first`)
	if e.get("settings.txt") != numbered(10) {
		t.Fatal("a refused edit changed the file")
	}
	e.ok("read", map[string]any{"file_path": "settings.txt", "offset": 3, "limit": 1})
	e.ok("edit", map[string]any{"file_path": "settings.txt", "old_string": "line 7", "new_string": "LINE 7"})
	e.ok("edit", map[string]any{"file_path": "settings.txt", "old_string": "line 8", "new_string": "LINE 8"})
	e.ok("write", map[string]any{"file_path": "new.txt", "content": "fresh\n"})
	e.ok("edit", map[string]any{"file_path": "new.txt", "old_string": "fresh", "new_string": "fresher"})
	e.ok("write", map[string]any{"file_path": "new.txt", "content": "rewritten\n"})
	if got := e.get("new.txt"); got != "rewritten\n" {
		t.Errorf("new.txt = %q", got)
	}
	// Another session has observed nothing.
	o := e.other()
	o.fail("edit", map[string]any{"file_path": "new.txt", "old_string": "rewritten", "new_string": "x"},
		CodeNotObserved, `edit requires reading "`+e.path("new.txt")+`" first`)
	o.fail("write", map[string]any{"file_path": "new.txt", "content": "x"},
		CodeNotObserved, `cannot overwrite existing "`+e.path("new.txt")+`" without reading it first`)
	if got := e.get("new.txt"); got != "rewritten\n" {
		t.Errorf("refused calls changed new.txt to %q", got)
	}
}

// TestStaleVersion is fs case 5: a file changed since it was observed is
// refused, and that is checked before matching (an old_string that no
// longer matches still gives FS_STALE_VERSION).
func TestStaleVersion(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", "alpha\nbeta\n")
	e.ok("read", map[string]any{"file_path": "a.txt"})
	e.put("a.txt", "gamma\n") // a shell command, say
	p := e.path("a.txt")
	e.fail("edit", map[string]any{"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"},
		CodeStaleVersion, `cannot edit "`+p+`": file changed since it was read`)
	e.fail("write", map[string]any{"file_path": "a.txt", "content": "mine\n"},
		CodeStaleVersion, `cannot write "`+p+`": file changed since it was read`)
	if got := e.get("a.txt"); got != "gamma\n" {
		t.Errorf("a stale call changed the file to %q", got)
	}
	// Deleted since: both refuse; write does not recreate it.
	e.ok("read", map[string]any{"file_path": "a.txt"})
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	e.fail("edit", map[string]any{"file_path": "a.txt", "old_string": "gamma", "new_string": "x"},
		CodeStaleVersion, `cannot edit "`+p+`": file changed since it was read`)
	e.fail("write", map[string]any{"file_path": "a.txt", "content": "x"},
		CodeStaleVersion, `cannot write "`+p+`": file no longer exists`)
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("a stale write recreated the file: %v", err)
	}
	// Versions compare content: a new mtime alone is not a change.
	e.put("b.txt", "same\n")
	e.ok("read", map[string]any{"file_path": "b.txt"})
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(e.path("b.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	e.ok("edit", map[string]any{"file_path": "b.txt", "old_string": "same", "new_string": "changed"})
	// Same size, same second: still a change.
	e.ok("read", map[string]any{"file_path": "b.txt"})
	e.put("b.txt", "chaNged\n")
	e.fail("edit", map[string]any{"file_path": "b.txt", "old_string": "chaNged", "new_string": "x"},
		CodeStaleVersion, `cannot edit "`+e.path("b.txt")+`": file changed since it was read`)
}

// TestConcurrentEdits is fs case 6: two edits of one file observed at the
// same version race; exactly one wins, the other gets FS_STALE_VERSION and
// the file holds the winner's change only.
func TestConcurrentEdits(t *testing.T) {
	e := newEnv(t)
	for round := 0; round < 20; round++ {
		e.put("race.txt", "alpha\nbeta\n")
		e.ok("read", map[string]any{"file_path": "race.txt"})
		f, err := resolve(e.dir, "race.txt")
		if err != nil {
			t.Fatal(err)
		}
		obs := observedOf(e.sess)
		v0, _ := obs.get(f.target)
		edits := []EditArgs{
			{FilePath: "race.txt", OldString: "alpha", NewString: "ALPHA"},
			{FilePath: "race.txt", OldString: "beta", NewString: "BETA"},
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range edits {
			wg.Go(func() { _, errs[i] = runEdit(context.Background(), e.sess, nil, obs, f, v0, edits[i]) })
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if won >= 0 {
					t.Fatalf("round %d: both edits succeeded", round)
				}
				won = i
			default:
				var te *tools.Error
				if !asErr(err, &te) || te.Code != CodeStaleVersion {
					t.Fatalf("round %d: loser error %v", round, err)
				}
			}
		}
		want := []string{"ALPHA\nbeta\n", "alpha\nBETA\n"}
		if won < 0 {
			t.Fatalf("round %d: no edit succeeded: %v", round, errs)
		}
		if got := e.get("race.txt"); got != want[won] {
			t.Fatalf("round %d: file %q, want %q", round, got, want[won])
		}
	}
	// Two sessions: the one that edits second is stale.
	e.put("two.txt", "x = 1\n")
	o := e.other()
	e.ok("read", map[string]any{"file_path": "two.txt"})
	o.ok("read", map[string]any{"file_path": "two.txt"})
	e.ok("edit", map[string]any{"file_path": "two.txt", "old_string": "1", "new_string": "2"})
	o.fail("edit", map[string]any{"file_path": "two.txt", "old_string": "1", "new_string": "3"},
		CodeStaleVersion, `cannot edit "`+e.path("two.txt")+`": file changed since it was read`)
	if got := e.get("two.txt"); got != "x = 2\n" {
		t.Errorf("two.txt = %q", got)
	}
}

// TestAmbiguousEdit is fs case 7, with the other matching errors and the
// argument rules.
func TestAmbiguousEdit(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", "a a a")
	e.ok("read", map[string]any{"file_path": "a.txt"})
	p := e.path("a.txt")
	e.fail("edit", map[string]any{"file_path": "a.txt", "old_string": "a", "new_string": "b"},
		CodeAmbiguousEdit, `old_string matched 3 times in "`+p+`"; provide a more specific old_string or set replace_all to true`)
	e.fail("edit", map[string]any{"file_path": "a.txt", "old_string": "zzz", "new_string": "b"},
		CodeEditNotFound, `old_string was not found in "`+p+`"`)
	e.fail("edit", map[string]any{"file_path": "a.txt", "old_string": "", "new_string": "b"},
		tools.CodeInvalidArgs, "old_string must be a non-empty string")
	e.fail("edit", map[string]any{"file_path": "a.txt", "old_string": "a", "new_string": "a"},
		tools.CodeInvalidArgs, "old_string and new_string must differ")
	e.fail("edit", map[string]any{"file_path": " ", "old_string": "a", "new_string": "b"},
		tools.CodeInvalidArgs, "file_path must be a non-empty string")
	if got := e.get("a.txt"); got != "a a a" {
		t.Fatalf("refused edits changed the file: %q", got)
	}
	r := e.ok("edit", map[string]any{"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": true})
	if got := e.get("a.txt"); got != "b b b" {
		t.Errorf("replace_all: %q", got)
	}
	if want := "The file " + p + " has been updated. All occurrences were successfully replaced."; text(r) != want {
		t.Errorf("text %q", text(r))
	}
	r = e.ok("edit", map[string]any{"file_path": "a.txt", "old_string": "b b", "new_string": "c"})
	if want := "The file " + p + " has been updated successfully."; text(r) != want {
		t.Errorf("text %q", text(r))
	}
	// Matches do not overlap: "aa" occurs twice in "aaaa", not three times.
	e.put("aa.txt", "aaaa\n")
	e.ok("read", map[string]any{"file_path": "aa.txt"})
	e.fail("edit", map[string]any{"file_path": "aa.txt", "old_string": "aa", "new_string": "b"},
		CodeAmbiguousEdit, `old_string matched 2 times in "`+e.path("aa.txt")+`"; provide a more specific old_string or set replace_all to true`)
	e.ok("edit", map[string]any{"file_path": "aa.txt", "old_string": "aa", "new_string": "b", "replace_all": true})
	if got := e.get("aa.txt"); got != "bb\n" {
		t.Errorf("aa.txt = %q", got)
	}
}

// TestAborted is fs case 8: a cancelled context gives FS_ABORTED and
// leaves the file untouched.
func TestAborted(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", "keep\n")
	e.ok("read", map[string]any{"file_path": "a.txt"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantErr(t, e.callCtx(ctx, "read", map[string]any{"file_path": "a.txt"}), CodeAborted, "read aborted")
	wantErr(t, e.callCtx(ctx, "write", map[string]any{"file_path": "a.txt", "content": "lost\n"}), CodeAborted, "write aborted")
	wantErr(t, e.callCtx(ctx, "write", map[string]any{"file_path": "b.txt", "content": "lost\n"}), CodeAborted, "write aborted")
	wantErr(t, e.callCtx(ctx, "edit", map[string]any{"file_path": "a.txt", "old_string": "keep", "new_string": "lost"}), CodeAborted, "edit aborted")
	if got := e.get("a.txt"); got != "keep\n" {
		t.Errorf("a.txt = %q", got)
	}
	if _, err := os.Stat(e.path("b.txt")); !os.IsNotExist(err) {
		t.Errorf("an aborted write created b.txt: %v", err)
	}
	assertNoTemp(t, e.dir)
	// The file can still be edited: nothing was recorded.
	e.ok("edit", map[string]any{"file_path": "a.txt", "old_string": "keep", "new_string": "kept"})
}

// TestBinaryNeverOverwritten replaces fs case 11: a binary file cannot be
// read, so it is never observed, so writing or editing it is refused and
// it stays byte-identical. An image file reads (as an image), and is not
// observed either.
func TestBinaryNeverOverwritten(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"prog.bin", "img.png"} {
		orig := "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00ELF"
		if name == "img.png" {
			orig = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
		}
		e.put(name, orig)
		p := e.path(name)
		if name == "img.png" {
			e.ok("read", map[string]any{"file_path": name})
		} else {
			e.fail("read", map[string]any{"file_path": name}, CodeNotText, `cannot read "`+p+`": binary file`)
		}
		e.fail("write", map[string]any{"file_path": name, "content": "text"}, CodeNotObserved, `cannot overwrite existing "`+p+`" without reading it first`)
		e.fail("edit", map[string]any{"file_path": name, "old_string": "ELF", "new_string": "GIF"}, CodeNotObserved, `edit requires reading "`+p+`" first`)
		if got := e.get(name); got != orig {
			t.Errorf("binary file changed: %q", got)
		}
	}
	// A file with a NUL byte after the first 8 KiB reads, but cannot be edited.
	late := "text\n" + strings.Repeat("a", sniffLen) + "\x00"
	e.put("late.txt", late)
	e.ok("read", map[string]any{"file_path": "late.txt", "limit": 1})
	e.fail("edit", map[string]any{"file_path": "late.txt", "old_string": "text", "new_string": "TEXT"}, CodeNotText, `cannot edit "`+e.path("late.txt")+`": binary file`)
	if got := e.get("late.txt"); got != late {
		t.Error("late.txt changed")
	}
}

// TestNotRegular: directories are refused by every tool.
func TestNotRegular(t *testing.T) {
	e := newEnv(t)
	if err := os.Mkdir(e.path("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := e.path("d")
	e.fail("write", map[string]any{"file_path": "d", "content": "x"}, CodeNotRegularFile, `cannot write "`+p+`": not a regular file`)
	e.put("d2/x", "x")
	e.ok("read", map[string]any{"file_path": "d2/x"})
	// Replaced by a directory after the read.
	if err := os.Remove(e.path("d2/x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(e.path("d2/x"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.fail("edit", map[string]any{"file_path": "d2/x", "old_string": "x", "new_string": "y"}, CodeNotRegularFile, `cannot edit "`+e.path("d2/x")+`": not a regular file`)
}
