package packaging

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// VerifyRelease checks a release directory as scripts/release.sh leaves
// it for version (X.Y.Z): its agent.json is RegistryEntry(version) byte
// for byte; every archive that entry points to is a file of dir named as
// the URL's last segment, under this repository's release of tag
// vVERSION; and the checksums file (ChecksumsName) lists exactly those
// archives, each once, with the sha256 of the file's bytes. The error
// lists every problem, one a line.
func VerifyRelease(dir, version string) error {
	want, err := RegistryEntry(version)
	if err != nil {
		return err
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	got, err := os.ReadFile(filepath.Join(dir, "agent.json"))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		bad("agent.json is not the registry entry for %s", version)
	}
	var e Entry
	if err := json.Unmarshal(got, &e); err != nil {
		return fmt.Errorf("agent.json: %w", err)
	}
	prefix := Repository + "/releases/download/v" + version + "/"
	var names []string
	for plat, bt := range e.Distribution.Binary {
		if !strings.HasPrefix(bt.Archive, prefix) {
			bad("%s: archive %s is not under %s", plat, bt.Archive, prefix)
		}
		names = append(names, path.Base(bt.Archive))
	}
	slices.Sort(names)
	sums, err := readChecksums(filepath.Join(dir, ChecksumsName(version)))
	if err != nil {
		return err
	}
	for _, name := range names {
		sum, ok := sums[name]
		if !ok {
			bad("%s is not in %s", name, ChecksumsName(version))
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			bad("%s: %v", name, err)
			continue
		}
		if h := sha256.Sum256(data); ok && hex.EncodeToString(h[:]) != sum {
			bad("%s: its sha256 is not the one %s lists", name, ChecksumsName(version))
		}
	}
	for name := range sums {
		if !slices.Contains(names, name) {
			bad("%s lists %s, which agent.json does not point to", ChecksumsName(version), name)
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// readChecksums reads a sha256sum file ("HEX  NAME" lines) into a map
// from name to hex digest; a malformed or repeated line is an error.
func readChecksums(p string) (map[string]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 64 || name == "" {
			return nil, fmt.Errorf("%s:%d: not a sha256sum line", filepath.Base(p), n)
		}
		if _, dup := sums[name]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", filepath.Base(p), n, name)
		}
		sums[name] = sum
	}
	return sums, sc.Err()
}
