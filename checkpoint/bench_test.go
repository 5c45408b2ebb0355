package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/internal/agentcmd"
	"github.com/dsh-acp/dsh-acp/internal/gittest"
)

// benchRepo writes a repository of n files (about 2 KB each, 100 to a
// folder), committed when commit is set (else all untracked).
func benchRepo(b *testing.B, n int, commit bool) string {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	dir := b.TempDir()
	line := strings.Repeat("x", 50) + "\n"
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n%s", i, strings.Repeat(line, 40))), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run := func(args ...string) { gittest.Git(b, dir, args...) }
	run("init", "-q")
	if commit {
		run("add", "-A")
		run("commit", "-q", "-m", "files")
	}
	return dir
}

// dirBytes is the size of the files below dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// benchTurns measures one turn that changes one file: its checkpoint
// (Before), the change, and its end (End: the after-snapshot and the
// card's diff). It reports the .git growth per turn.
func benchTurns(b *testing.B, commit bool) {
	dir := benchRepo(b, 10000, commit)
	ctx := context.Background()
	tr := New(dir, "sess_bench", b.TempDir(), agentcmd.Runner{})
	target := filepath.Join(dir, "d050", "f05000.txt")
	// A first turn outside the timing: it adds the untracked files'
	// blobs once (measured by BenchmarkGitFirstCheckpointUntracked10k).
	tr.Before(ctx, 1, nil)
	tr.End(ctx, 1)
	start := dirBytes(filepath.Join(dir, ".git"))
	turn := 1
	b.ResetTimer()
	for b.Loop() {
		turn++
		tr.Before(ctx, turn, nil)
		if err := os.WriteFile(target, []byte(fmt.Sprintf("turn %d\n", turn)), 0o644); err != nil {
			b.Fatal(err)
		}
		if d := tr.End(ctx, turn); d == nil || len(d.Files) != 1 {
			b.Fatalf("turn %d changes %+v", turn, d)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(dirBytes(filepath.Join(dir, ".git"))-start)/float64(turn-1), "git-bytes/turn")
	if st, err := os.Stat(tr.indexCache()); err == nil {
		b.ReportMetric(float64(st.Size()), "own-index-bytes")
	}
}

// BenchmarkGitTurn10k: a turn that changes one file of a committed
// repository of 10,000 files.
func BenchmarkGitTurn10k(b *testing.B) { benchTurns(b, true) }

// BenchmarkGitTurnUntracked10k: the same with the 10,000 files untracked.
func BenchmarkGitTurnUntracked10k(b *testing.B) { benchTurns(b, false) }

// BenchmarkGitFirstCheckpointUntracked10k: the first checkpoint of a
// repository whose 10,000 files are all untracked (each file's blob is
// written once), and the disk it takes.
func BenchmarkGitFirstCheckpointUntracked10k(b *testing.B) {
	var grown int64
	n := 0
	for b.Loop() {
		b.StopTimer()
		dir := benchRepo(b, 10000, false)
		start := dirBytes(filepath.Join(dir, ".git"))
		tr := New(dir, "sess_bench", b.TempDir(), agentcmd.Runner{})
		b.StartTimer()
		tr.Before(context.Background(), 1, nil)
		b.StopTimer()
		grown += dirBytes(filepath.Join(dir, ".git")) - start
		n++
		b.StartTimer()
	}
	b.ReportMetric(float64(grown)/float64(n), "git-bytes")
}

// BenchmarkDirTurn10k: a turn outside git that changes one file of
// 10,000 through a tool (before-image) : two walks and one copy.
func BenchmarkDirTurn10k(b *testing.B) {
	dir := benchRepo(b, 10000, false)
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	state := b.TempDir()
	tr := New(dir, "sess_bench", state, agentcmd.Runner{})
	target := filepath.Join(dir, "d050", "f05000.txt")
	turn := 0
	for b.Loop() {
		turn++
		tr.Before(ctx, turn, []string{target})
		if err := os.WriteFile(target, []byte(fmt.Sprintf("turn %d\n", turn)), 0o644); err != nil {
			b.Fatal(err)
		}
		if d := tr.End(ctx, turn); d == nil || len(d.Files) != 1 {
			b.Fatalf("turn %d changes %+v", turn, d)
		}
	}
	b.ReportMetric(float64(dirBytes(state))/float64(min(turn, MaxTurns)), "state-bytes/turn")
}
