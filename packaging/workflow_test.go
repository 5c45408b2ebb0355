package packaging

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflow is the part of a GitHub Actions workflow the release needs;
// decoding with known fields only, a misspelt key is an error.
type workflow struct {
	Name string `yaml:"name"`
	On   struct {
		Push struct {
			Tags []string `yaml:"tags"`
		} `yaml:"push"`
	} `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		RunsOn string `yaml:"runs-on"`
		Steps  []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			Env  map[string]string `yaml:"env"`
			Run  string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// tagFilter turns a GitHub filter pattern of the kinds the workflow uses
// ([0-9] classes, + for one or more, * for any run without /, literal
// dots) into an anchored regular expression.
func tagFilter(t *testing.T, pattern string) *regexp.Regexp {
	t.Helper()
	r := strings.NewReplacer(".", `\.`, "*", `[^/]*`).Replace(pattern)
	re, err := regexp.Compile("^" + r + "$")
	if err != nil {
		t.Fatalf("tag filter %q: %v", pattern, err)
	}
	return re
}

// TestReleaseWorkflow: .github/workflows/release.yml is well-formed YAML
// of the expected shape, runs on version tags only, runs the release
// script into the directory it verifies (releasetool verify) and uploads,
// checks the committed agent.json, and attaches every file a release
// needs: each archive agent.json points to, the checksums file,
// agent.json and icon.svg. The actions it uses are GitHub's own, pinned.
func TestReleaseWorkflow(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	if len(wf.On.Push.Tags) != 1 {
		t.Fatalf("tags %q, want one version pattern", wf.On.Push.Tags)
	}
	re := tagFilter(t, wf.On.Push.Tags[0])
	for tag, want := range map[string]bool{"v0.1.0": true, "v12.30.4": true, "v1.2": false, "v1.2.3-rc1": false, "0.1.0": false, "main": false} {
		if re.MatchString(tag) != want {
			t.Errorf("tag %s: the workflow runs = %v, want %v", tag, !want, want)
		}
	}
	if wf.Permissions["contents"] != "write" {
		t.Errorf("permissions %v: creating a release needs contents: write", wf.Permissions)
	}
	job, ok := wf.Jobs["release"]
	if len(wf.Jobs) != 1 || !ok || job.RunsOn != "ubuntu-latest" {
		t.Fatalf("jobs %v, want one job release on ubuntu-latest", wf.Jobs)
	}
	var runs []string
	for _, s := range job.Steps {
		if s.Name == "" {
			t.Errorf("a step without a name: %+v", s)
		}
		if s.Uses != "" && !regexp.MustCompile(`^actions/(checkout|setup-go)@v[0-9]+$`).MatchString(s.Uses) {
			t.Errorf("step %q uses %s: only GitHub's checkout and setup-go, pinned to a major version", s.Name, s.Uses)
		}
		if s.Uses == "" && s.Run == "" {
			t.Errorf("step %q does nothing", s.Name)
		}
		if strings.HasPrefix(s.Uses, "actions/setup-go@") && s.With["go-version-file"] != "go.mod" {
			t.Errorf("setup-go with %v: the Go version is go.mod's", s.With)
		}
		if s.Run != "" {
			runs = append(runs, s.Run)
		}
	}
	want := []string{
		`bash scripts/release.sh --out dist "$GITHUB_REF_NAME"`,
		`git diff --exit-code -- packaging/registry`,
		`go run ./packaging/cmd/releasetool verify dist "${GITHUB_REF_NAME#v}"`,
		`gh release create "$GITHUB_REF_NAME"`,
	}
	if len(runs) != len(want) {
		t.Fatalf("run steps %q, want %d", runs, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(runs[i], w) {
			t.Errorf("run step %d is %q, want it to start with %q", i+1, runs[i], w)
		}
	}
	var globs []string
	for _, f := range strings.Fields(runs[3]) {
		if strings.HasPrefix(f, "dist/") {
			globs = append(globs, f)
		}
	}
	v := "1.2.3"
	need := []string{ChecksumsName(v), "agent.json", "icon.svg"}
	for _, tg := range Targets {
		need = append(need, tg.ArchiveName(v))
	}
	for _, name := range need {
		found := false
		for _, g := range globs {
			if ok, _ := path.Match(g, "dist/"+name); ok {
				found = true
			}
		}
		if !found {
			t.Errorf("the release does not attach %s (attached: %q)", name, globs)
		}
	}
}
