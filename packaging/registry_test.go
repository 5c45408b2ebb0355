package packaging

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// committed reads packaging/registry/agent.json.
func committed(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("registry", "agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// preparedVersion is the release cmd/dsh-acp prepares: X.Y.Z of its
// `var version = "X.Y.Z-dev"`, read the way scripts/release.sh reads it.
func preparedVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "cmd", "dsh-acp", "config.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^var version = "([0-9]+\.[0-9]+\.[0-9]+)-dev"$`).FindSubmatch(b)
	if m == nil {
		t.Fatal(`cmd/dsh-acp/config.go has no var version = "X.Y.Z-dev" line (scripts/release.sh reads it)`)
	}
	return string(m[1])
}

// TestCommittedEntry: the committed agent.json is exactly what the
// release script writes for the version the tree prepares (regenerate it
// with scripts/release.sh, or `go run ./packaging/cmd/releasetool
// agent-json VERSION > packaging/registry/agent.json`).
func TestCommittedEntry(t *testing.T) {
	v := preparedVersion(t)
	want, err := RegistryEntry(v)
	if err != nil {
		t.Fatal(err)
	}
	if got := committed(t); !bytes.Equal(got, want) {
		t.Errorf("packaging/registry/agent.json is not the release script's output for %s:\n--- got\n%s\n--- want\n%s", v, got, want)
	}
}

// registryProblems applies the ACP registry's rules for an agent.json:
// its agent.schema.json (read at agentclientprotocol/registry commit
// 172d5034) and the checks of its build_registry.py, restated here. Each
// problem is one sentence.
func registryProblems(raw []byte) []string {
	var p []string
	bad := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	var e map[string]any
	if err := json.Unmarshal(raw, &e); err != nil {
		return []string{"not a JSON object: " + err.Error()}
	}
	str := func(m map[string]any, k string) (string, bool) { s, ok := m[k].(string); return s, ok }
	for _, k := range []string{"id", "name", "version", "description", "distribution"} {
		if _, ok := e[k]; !ok {
			bad("missing required field %s", k)
		}
	}
	known := map[string]bool{"id": true, "name": true, "version": true, "description": true, "repository": true,
		"website": true, "authors": true, "license": true, "license_url": true, "icon": true, "distribution": true}
	for k := range e {
		if !known[k] {
			bad("unknown field %s", k)
		}
	}
	id, _ := str(e, "id")
	if !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(id) {
		bad("id %q: lowercase letters, digits and hyphens, starting with a letter", id)
	}
	for _, k := range []string{"name", "description"} {
		if s, ok := str(e, k); !ok || s == "" {
			bad("%s must be a non-empty string", k)
		}
	}
	version, _ := str(e, "version")
	parts := strings.Split(version, ".")
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+`).MatchString(version) || len(parts) < 3 {
		bad("version %q is not a semantic version", version)
	} else {
		for _, d := range parts[:3] {
			if _, err := strconv.Atoi(d); err != nil {
				bad("version %q has a non-numeric part", version)
			}
		}
	}
	for _, k := range []string{"repository", "website", "license_url"} {
		if v, ok := e[k]; ok {
			s, _ := v.(string)
			if u, err := url.Parse(s); err != nil || !u.IsAbs() {
				bad("%s %q is not a URI", k, s)
			}
		}
	}
	if v, ok := e["authors"]; ok {
		a, ok := v.([]any)
		for _, x := range a {
			if _, isStr := x.(string); !isStr {
				ok = false
			}
		}
		if !ok {
			bad("authors must be a list of strings")
		}
	}
	dist, _ := e["distribution"].(map[string]any)
	if len(dist) == 0 {
		bad("distribution must be a non-empty object")
	}
	for k := range dist {
		if k != "binary" && k != "npx" && k != "uvx" {
			bad("unknown distribution %s", k)
		}
	}
	bin, _ := dist["binary"].(map[string]any)
	if _, ok := dist["binary"]; ok && len(bin) == 0 {
		bad("distribution.binary must be a non-empty object")
	}
	platforms := map[string]bool{"darwin-aarch64": true, "darwin-x86_64": true, "linux-aarch64": true,
		"linux-x86_64": true, "windows-aarch64": true, "windows-x86_64": true}
	families := map[string]bool{}
	urlVersion := regexp.MustCompile(`/(?:download|releases)/v?([\d.]+)/`)
	hex64 := regexp.MustCompile(`^[a-fA-F0-9]{64}$`)
	for plat, v := range bin {
		if !platforms[plat] {
			bad("unknown platform %s", plat)
		}
		families[strings.Split(plat, "-")[0]] = true
		tgt, _ := v.(map[string]any)
		for k := range tgt {
			switch k {
			case "archive", "cmd", "args", "env", "sha256":
			default:
				bad("%s: unknown field %s", plat, k)
			}
		}
		archive, ok := str(tgt, "archive")
		if u, err := url.Parse(archive); !ok || err != nil || !u.IsAbs() {
			bad("%s: archive %q is not a URI", plat, archive)
		}
		if _, ok := str(tgt, "cmd"); !ok {
			bad("%s: cmd is required", plat)
		}
		if s, ok := tgt["sha256"]; ok {
			if h, _ := s.(string); !hex64.MatchString(h) {
				bad("%s: sha256 is not 64 hex digits", plat)
			}
		}
		low := strings.ToLower(archive)
		for _, ext := range []string{".dmg", ".pkg", ".deb", ".rpm", ".msi", ".appimage"} {
			if strings.HasSuffix(low, ext) {
				bad("%s: installer format %s is not supported", plat, ext)
			}
		}
		if strings.Contains(archive, "/latest/") {
			bad("%s: archive URL uses /latest/", plat)
		} else if m := urlVersion.FindStringSubmatch(archive); m != nil && strings.TrimSuffix(m[1], ".") != version {
			bad("%s: archive URL has version %s, the entry %s", plat, m[1], version)
		}
	}
	if len(bin) > 0 {
		for _, f := range []string{"darwin", "linux", "windows"} {
			if !families[f] {
				bad("no build for %s (the registry warns)", f)
			}
		}
	}
	return p
}

// TestRegistryRules: the committed entry passes the registry's rules, and
// the rules catch what they exist for (so the test could fail).
func TestRegistryRules(t *testing.T) {
	raw := committed(t)
	if p := registryProblems(raw); len(p) > 0 {
		t.Errorf("agent.json breaks the registry's rules:\n%s", strings.Join(p, "\n"))
	}
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Distribution.Binary) != 6 {
		t.Errorf("%d platforms, want the six targets", len(e.Distribution.Binary))
	}
	for _, taken := range []string{"dsh-acp", "dsh-acp-interactive", "deepseek-acp", "deepseek-harness-acp"} {
		if e.ID == taken {
			t.Errorf("registry id %q is taken by another agent", e.ID)
		}
	}
	mutate := func(f func(m map[string]any)) []byte {
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	plat := func(m map[string]any, p string) map[string]any {
		return m["distribution"].(map[string]any)["binary"].(map[string]any)[p].(map[string]any)
	}
	bad := map[string][]byte{
		"upper-case id":  mutate(func(m map[string]any) { m["id"] = "Dsh" }),
		"no description": mutate(func(m map[string]any) { delete(m, "description") }),
		"v in version":   mutate(func(m map[string]any) { m["version"] = "v1.0.0" }),
		"latest URL": mutate(func(m map[string]any) {
			plat(m, "linux-x86_64")["archive"] = "https://github.com/o/r/releases/latest/download/x.tar.gz"
		}),
		"other version in URL": mutate(func(m map[string]any) {
			plat(m, "linux-x86_64")["archive"] = "https://github.com/o/r/releases/download/v9.9.9/x.tar.gz"
		}),
		"installer": mutate(func(m map[string]any) { plat(m, "darwin-x86_64")["archive"] = "https://x/releases/download/v1/a.dmg" }),
		"no cmd":    mutate(func(m map[string]any) { delete(plat(m, "windows-x86_64"), "cmd") }),
		"bad platform": mutate(func(m map[string]any) {
			m["distribution"].(map[string]any)["binary"].(map[string]any)["freebsd-x86_64"] = map[string]any{"archive": "https://x/y.tar.gz", "cmd": "./y"}
		}),
		"no windows": mutate(func(m map[string]any) {
			b := m["distribution"].(map[string]any)["binary"].(map[string]any)
			delete(b, "windows-x86_64")
			delete(b, "windows-aarch64")
		}),
		"extra target field": mutate(func(m map[string]any) { plat(m, "linux-aarch64")["checksum"] = "x" }),
	}
	for name, b := range bad {
		if p := registryProblems(b); len(p) == 0 {
			t.Errorf("%s: the rules found nothing wrong", name)
		}
	}
}

// TestEntryFollowsTargets: every target's archive, with the version in
// its URL path, and the right command.
func TestEntryFollowsTargets(t *testing.T) {
	b, err := RegistryEntry("2.3.4")
	if err != nil {
		t.Fatal(err)
	}
	var e Entry
	_ = json.Unmarshal(b, &e)
	if e.Version != "2.3.4" || e.ID != RegistryID {
		t.Errorf("entry %+v", e)
	}
	for _, tg := range Targets {
		bt := e.Distribution.Binary[tg.Platform]
		want := Repository + "/releases/download/v2.3.4/dsh-acp_2.3.4_" + tg.GOOS + "_" + tg.GOARCH
		if tg.GOOS == "windows" {
			want += ".zip"
			if bt.Cmd != "./dsh-acp.exe" {
				t.Errorf("%s cmd %q", tg.Platform, bt.Cmd)
			}
		} else {
			want += ".tar.gz"
			if bt.Cmd != "./dsh-acp" {
				t.Errorf("%s cmd %q", tg.Platform, bt.Cmd)
			}
		}
		if bt.Archive != want {
			t.Errorf("%s archive %q, want %q", tg.Platform, bt.Archive, want)
		}
	}
	for _, v := range []string{"1.0", "v1.0.0", "1.0.0-rc1", "01.0.0", ""} {
		if _, err := RegistryEntry(v); err == nil {
			t.Errorf("RegistryEntry(%q) accepted", v)
		}
	}
}

// iconProblems applies the registry's icon rules (its build_registry.py):
// an <svg> root, 16x16 by width/height or viewBox, square, no comments,
// fill and stroke (attributes, style, <style>) only currentColor, none or
// inherit, and currentColor used at least once.
func iconProblems(svg []byte) []string {
	var p []string
	if bytes.Contains(svg, []byte("<!--")) {
		p = append(p, "has an XML comment")
	}
	allowed := map[string]bool{"currentcolor": true, "none": true, "inherit": true}
	current := false
	check := func(where, v string) {
		v = strings.ToLower(strings.TrimSpace(v))
		if v == "currentcolor" {
			current = true
		} else if !allowed[v] {
			p = append(p, fmt.Sprintf("%s is %q", where, v))
		}
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	root := true
	inStyle := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return append(p, "not XML: "+err.Error())
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range el.Attr {
				attrs[a.Name.Local] = a.Value
			}
			if root {
				root = false
				if el.Name.Local != "svg" {
					return append(p, "root is <"+el.Name.Local+">")
				}
				w, h := attrs["width"], attrs["height"]
				if w == "" || h == "" {
					if f := strings.Fields(attrs["viewBox"]); len(f) == 4 {
						w, h = f[2], f[3]
					}
				}
				num := func(s string) string { return strings.TrimRight(s, "abcdefghijklmnopqrstuvwxyz%") }
				if num(w) != "16" || num(h) != "16" {
					p = append(p, fmt.Sprintf("size %sx%s, want 16x16", w, h))
				}
			}
			for _, k := range []string{"fill", "stroke"} {
				if v, ok := attrs[k]; ok {
					check(k, v)
				}
			}
			for _, decl := range strings.Split(attrs["style"], ";") {
				if k, v, ok := strings.Cut(decl, ":"); ok && (strings.TrimSpace(k) == "fill" || strings.TrimSpace(k) == "stroke") {
					check("style "+strings.TrimSpace(k), v)
				}
			}
			inStyle = el.Name.Local == "style"
		case xml.CharData:
			if inStyle {
				for _, m := range regexp.MustCompile(`(?i)\b(fill|stroke)\s*:\s*([^;}\s]+)`).FindAllStringSubmatch(string(el), -1) {
					check("CSS "+m[1], m[2])
				}
			}
		case xml.EndElement:
			inStyle = false
		}
	}
	if !current {
		p = append(p, "uses no currentColor")
	}
	return p
}

func TestIcon(t *testing.T) {
	svg, err := os.ReadFile(filepath.Join("registry", "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if p := iconProblems(svg); len(p) > 0 {
		t.Errorf("icon.svg breaks the registry's icon rules: %v", p)
	}
	bad := []string{
		`<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24"><path fill="currentColor" d="M0 0h1v1z"/></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path fill="#f00" d="M0 0h1v1z"/></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path style="stroke: red" fill="currentColor" d="M0 0h1v1z"/></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><style>path{fill:blue}</style><path stroke="currentColor" d="M0 0h1v1z"/></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path fill="none" d="M0 0h1v1z"/></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><!-- c --><path fill="currentColor" d="M0 0h1v1z"/></svg>`,
		`<g/>`,
	}
	for _, s := range bad {
		if p := iconProblems([]byte(s)); len(p) == 0 {
			t.Errorf("the icon rules accept %s", s)
		}
	}
}
