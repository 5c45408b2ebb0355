package exhaustive

import (
	"github.com/dsh-acp/dsh-acp/internal/acptest"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// withModule runs f with the -module flag set to m.
func withModule(t *testing.T, m string, f func()) {
	t.Helper()
	old := module
	if err := Analyzer.Flags.Set("module", m); err != nil {
		t.Fatal(err)
	}
	defer func() { module = old }()
	f()
}

// TestFixtures: the analyzer's findings on testdata (its `// want`
// comments): a missing member is reported, a documented default is
// accepted and a bare one is not, pointers are not values, interface
// cases cover their implementers, enums are checked by value, and sets
// that are not sealed, not ours or not enums are left alone.
func TestFixtures(t *testing.T) {
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	withModule(t, "example.com/closed", func() {
		results := analysistest.Run(t, dir, Analyzer, "./...")
		checked := 0
		for _, r := range results {
			if res, ok := r.Result.(*Result); ok {
				checked += len(res.Checked)
			}
		}
		// sets: Describe and describeInTest (twice: the package and
		// its test variant see Describe); use: 15 switches over sets.
		if checked < 15 {
			t.Errorf("checked %d switches over closed sets, want at least 15", checked)
		}
	})
}

// TestRepository runs the analyzer over every package of this module,
// tests included: no finding, and the switches that matter were seen.
func TestRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: loading and type-checking the whole module takes tens of seconds; CI runs it (and .ci/run runs the analyzer itself)")
	}
	root := acptest.RepoRoot(t)
	cfg := &packages.Config{Mode: packages.LoadSyntax, Dir: root, Tests: true}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if n := packages.PrintErrors(pkgs); n > 0 {
		t.Fatalf("%d errors loading the module's packages", n)
	}
	var checked []string
	withModule(t, "github.com/dsh-acp/dsh-acp", func() {
		graph, err := checker.Analyze([]*analysis.Analyzer{Analyzer}, pkgs, nil)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for act := range graph.All() {
			if act.Analyzer != Analyzer {
				continue
			}
			if act.Err != nil {
				t.Errorf("%s: %v", act.Package.PkgPath, act.Err)
				continue
			}
			for _, d := range act.Diagnostics {
				p := act.Package.Fset.Position(d.Pos)
				msg := p.String() + ": " + d.Message
				if !seen[msg] { // a package and its test variant share files
					seen[msg] = true
					t.Error(strings.TrimPrefix(msg, root+string(filepath.Separator)))
				}
			}
			if res, ok := act.Result.(*Result); ok {
				checked = append(checked, res.Checked...)
			}
		}
	})
	// The check is only as good as what it finds: the card switches of
	// present and switches over every kind of set must be among them.
	for _, want := range []string{
		"present/call.go", "present/result.go", // the call and result view switches
		"tools.ToolCallView", "tools.ToolResultView", "acp.Update", "acp.ToolCallContent",
		"session.Data", "tools.Class", "llm.DeltaKind", "permission.Decision",
	} {
		found := false
		for _, c := range checked {
			if strings.Contains(filepath.ToSlash(c), want) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no switch over a closed set matching %q was checked (%d checked)", want, len(checked))
		}
	}
}
