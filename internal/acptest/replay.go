package acptest

import (
	"os"
	"path/filepath"
	"testing"
)

// ReplaySource is one folder of replay scenarios: one sub-folder per
// scenario (NNN.sse, NNN.request.json, steps.json, input.json, NOTES.md,
// workspace/), the format of ../shared/fixtures/replay/README.md.
type ReplaySource struct {
	Name string // "testdata" or "shared": a subtest name
	Dir  string // absolute path
}

// Recordings returns the repository's own recordings, testdata/replay
// under the repository root; it fails t when the folder is missing.
func Recordings(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "testdata", "replay")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("acptest: the repository's recordings are missing: %s", dir)
	}
	return dir
}

// SharedFixtures returns ../shared/fixtures/replay beside the repository
// (the recorded real DeepSeek sessions) and true when it exists. They are
// an extra check beside the repository's own recordings: when the
// ../shared/fixtures folder is absent, SharedFixtures logs that the extra
// check is skipped, naming the folder, and returns false; under CI=true,
// where ../shared is always beside the clone, it fails t instead.
//
// It logs rather than calling t.Skip so that a test run on a user's
// clone, which has no ../shared, reports no skipped test for what the
// repository's own recordings already cover.
func SharedFixtures(t testing.TB) (string, bool) {
	t.Helper()
	fixtures := filepath.Join(filepath.Dir(RepoRoot(t)), "shared", "fixtures")
	dir := filepath.Join(fixtures, "replay")
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, true
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("acptest: ../shared/fixtures not found at %s; under CI=true the recorded sessions beside the clone are required", fixtures)
	}
	t.Logf("extra check skipped: the recorded sessions of ../shared/fixtures are not beside the repository (%s not found); the repository's own recordings ran", fixtures)
	return "", false
}

// ReplaySources returns the repository's recordings and, when present,
// the shared recorded sessions (see SharedFixtures), in that order.
func ReplaySources(t testing.TB) []ReplaySource {
	t.Helper()
	out := []ReplaySource{{Name: "testdata", Dir: Recordings(t)}}
	if dir, ok := SharedFixtures(t); ok {
		out = append(out, ReplaySource{Name: "shared", Dir: dir})
	}
	return out
}
