package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRelease writes what scripts/release.sh leaves for version into a
// new directory (archives with made-up bytes) and returns it.
func fakeRelease(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	var archives []string
	for _, tg := range Targets {
		p := filepath.Join(dir, tg.ArchiveName(version))
		if err := os.WriteFile(p, []byte("archive of "+tg.Platform), 0o644); err != nil {
			t.Fatal(err)
		}
		archives = append(archives, p)
	}
	if err := WriteChecksums(filepath.Join(dir, ChecksumsName(version)), archives); err != nil {
		t.Fatal(err)
	}
	entry, err := RegistryEntry(version)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.json"), entry, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestVerifyRelease: a release as the script writes it verifies; each
// way it can disagree with its agent.json is found and named.
func TestVerifyRelease(t *testing.T) {
	const v = "1.2.3"
	if err := VerifyRelease(fakeRelease(t, v), v); err != nil {
		t.Fatalf("a good release: %v", err)
	}
	linux := Targets[0].ArchiveName(v)
	sums := ChecksumsName(v)
	for name, tc := range map[string]struct {
		change func(dir string)
		want   string
	}{
		"an archive changed after its sum": {func(dir string) {
			_ = os.WriteFile(filepath.Join(dir, linux), []byte("other bytes"), 0o644)
		}, linux + ": its sha256 is not the one"},
		"an archive missing": {func(dir string) { _ = os.Remove(filepath.Join(dir, linux)) }, linux + ": open"},
		"a sum missing": {func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, sums))
			_ = os.WriteFile(filepath.Join(dir, sums), []byte(strings.SplitN(string(b), "\n", 2)[1]), 0o644)
		}, linux + " is not in " + sums},
		"a sum too many": {func(dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, sums), os.O_APPEND|os.O_WRONLY, 0)
			_, _ = f.WriteString(strings.Repeat("ab", 32) + "  extra.tar.gz\n")
			f.Close()
		}, sums + " lists extra.tar.gz"},
		"another version's entry": {func(dir string) {
			e, _ := RegistryEntry("1.2.4")
			_ = os.WriteFile(filepath.Join(dir, "agent.json"), e, 0o644)
		}, "agent.json is not the registry entry for 1.2.3"},
	} {
		dir := fakeRelease(t, v)
		tc.change(dir)
		if err := VerifyRelease(dir, v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}
