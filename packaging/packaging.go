// Package packaging describes the release: the six targets the release
// script (scripts/release.sh) cross-builds, the names of their archives,
// and the ACP registry entry (agent.json) that points at them. The
// script asks cmd/releaseinfo for these, so the names live in one place,
// and the committed packaging/registry/agent.json is checked against
// RegistryEntry by the package's tests.
package packaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
)

// RegistryID is the agent's id in the ACP registry. `dsh-acp`,
// `dsh-acp-interactive`, `deepseek-acp` and `deepseek-harness-acp` are
// taken there by the Node wrappers of the TypeScript harness.
const RegistryID = "dsh-go"

// Repository is the project's source repository; release archives are
// downloaded from its GitHub releases.
const Repository = "https://github.com/dsh-acp/dsh-acp"

// License is the project's license (the LICENSE file at the
// repository's root), as an SPDX identifier.
const License = "BSD-3-Clause"

// Binary is the executable's base name inside every archive.
const Binary = "dsh-acp"

// Target is one platform a release is built for.
type Target struct {
	GOOS, GOARCH string
	// Platform is the ACP registry's name for it (e.g. linux-x86_64).
	Platform string
}

// Targets are the release's platforms: linux, darwin and windows, each on
// amd64 and arm64, in the order the script builds them.
var Targets = []Target{
	{"linux", "amd64", "linux-x86_64"},
	{"linux", "arm64", "linux-aarch64"},
	{"darwin", "amd64", "darwin-x86_64"},
	{"darwin", "arm64", "darwin-aarch64"},
	{"windows", "amd64", "windows-x86_64"},
	{"windows", "arm64", "windows-aarch64"},
}

// Exe is the executable's file name for t: dsh-acp, or dsh-acp.exe on
// Windows.
func (t Target) Exe() string {
	if t.GOOS == "windows" {
		return Binary + ".exe"
	}
	return Binary
}

// ArchiveName is t's archive for version (without a leading v):
// dsh-acp_VERSION_GOOS_GOARCH.tar.gz, or .zip on Windows. The executable
// sits at the archive's root, so the registry's `cmd` needs no version.
func (t Target) ArchiveName(version string) string {
	ext := ".tar.gz"
	if t.GOOS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("%s_%s_%s_%s%s", Binary, version, t.GOOS, t.GOARCH, ext)
}

// ArchiveURL is where t's archive of version is downloaded from: the
// GitHub release of tag vVERSION.
func (t Target) ArchiveURL(version string) string {
	return fmt.Sprintf("%s/releases/download/v%s/%s", Repository, version, t.ArchiveName(version))
}

// ChecksumsName is the release's sha256sum file for version.
func ChecksumsName(version string) string {
	return fmt.Sprintf("%s_%s_checksums.txt", Binary, version)
}

// semver is the version form releases use: MAJOR.MINOR.PATCH, digits
// only (the registry's validator requires numeric parts).
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// ValidVersion reports whether v is a release version (1.2.3, no v, no
// suffix).
func ValidVersion(v string) error {
	if !semver.MatchString(v) {
		return fmt.Errorf("release version %q is not MAJOR.MINOR.PATCH", v)
	}
	return nil
}

// Entry is an ACP registry entry (the registry's agent.schema.json).
type Entry struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Version      string       `json:"version"`
	Description  string       `json:"description"`
	Repository   string       `json:"repository,omitempty"`
	Website      string       `json:"website,omitempty"`
	Authors      []string     `json:"authors,omitempty"`
	License      string       `json:"license,omitempty"`
	Distribution Distribution `json:"distribution"`
}

// Distribution is an entry's ways to install; this agent ships binaries
// only.
type Distribution struct {
	Binary map[string]BinaryTarget `json:"binary"`
}

// BinaryTarget is one platform's archive and the command in it. No
// sha256: the registry's hourly update rewrites archive URLs to the newest
// release and would leave a checksum stale; the release's checksums file
// has them.
type BinaryTarget struct {
	Archive string   `json:"archive"`
	Cmd     string   `json:"cmd"`
	Args    []string `json:"args,omitempty"`
}

// RegistryEntry returns the registry entry for version, as the release
// script writes it to packaging/registry/agent.json: indented JSON with a
// final newline, platforms in key order. version must pass ValidVersion.
func RegistryEntry(version string) ([]byte, error) {
	if err := ValidVersion(version); err != nil {
		return nil, err
	}
	e := Entry{
		ID:           RegistryID,
		Name:         "dsh-acp (DeepSeek)",
		Version:      version,
		Description:  "Coding agent for DeepSeek and any OpenAI-compatible endpoint in one static binary: real diffs and live terminals as tool cards, permission modes, shell commands confined by the kernel on Linux, sessions you can reload.",
		Repository:   Repository,
		Authors:      []string{"dsh-acp contributors"},
		License:      License,
		Distribution: Distribution{Binary: map[string]BinaryTarget{}},
	}
	for _, t := range Targets {
		e.Distribution.Binary[t.Platform] = BinaryTarget{Archive: t.ArchiveURL(version), Cmd: "./" + t.Exe()}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
