package layering

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// anyOurs marks a package that may import every package of ours except
// the commands (cmd/...).
const anyOurs = "*"

// rule is what one package (a path relative to the module) may import.
type rule struct {
	// ours are the packages of this module it may import; anyOurs
	// allows all but cmd/...
	ours []string
	// external, when non-nil, lists the outside import paths (prefixes,
	// "/"-bounded) it may use besides the standard library; nil leaves
	// outside modules unrestricted.
	external []string
}

// toolDeps is what a tool package may import: "tools, hunks,
// permission (paths)". Tools never import acp, bridge or one another.
var toolDeps = []string{"tools", "hunks", "permission"}

// rules is what each package may import, for the packages that exist.
// Where a row goes beyond the design's first sketch, its comment says
// why: tools also uses golang.org/x/text (the wording of the schema
// library's messages), bridge also imports permission. A package missing
// here fails the test (decide its layer), and so does a row for a
// package that does not exist.
var rules = map[string]rule{
	"acp": {ours: nil, external: []string{"github.com/sourcegraph/jsonrpc2"}},
	"llm": {ours: nil, external: []string{}},
	// Where the API key comes from: the variables and the login file.
	"credentials": {ours: nil, external: []string{}},
	"hunks":       {ours: nil, external: []string{}},
	// Checkpoints: the card's hunks, the session's change events, and
	// the search tools' walk (their ignore rules) outside git.
	"checkpoint": {ours: []string{"hunks", "session", "tools", "toolsearch", "internal/agentcmd", "sandbox"}, external: []string{}},
	// google/jsonschema-go validates raw (MCP) schemas.
	// The counts of internal/probe (a test seam: tool lookups, decodes);
	// go-json-experiment's tokenizer finds repeated keys.
	"tools": {ours: []string{"internal/probe"}, external: []string{"github.com/google/jsonschema-go", "github.com/go-json-experiment/json"}},
	// The session log records tool results.
	"session": {ours: []string{"tools"}},
	// Modes and policy; the tools' declared classes, never a tool by name.
	"permission": {ours: []string{"tools"}},
	// The counts of internal/probe (a test seam: an edit's reads, diffs).
	"toolfs": {ours: append(append([]string{}, toolDeps...), "internal/probe")},
	// The shell tools run their commands through the sandbox.
	"toolbash": {ours: append(append([]string{}, toolDeps...), "sandbox")},
	"tooltodo": {ours: toolDeps},
	"toolask":  {ours: toolDeps},
	// MCP servers' tools: the tools layer and the official MCP SDK.
	"toolmcp":    {ours: []string{"tools"}, external: []string{"github.com/modelcontextprotocol/go-sdk"}},
	"toolsearch": {ours: toolDeps},
	// The subagent tools: a runner the bridge gives each session.
	"toolsub": {ours: toolDeps},
	// The web tools: the tools layer; HTML to Markdown with
	// JohannesKaufmann/html-to-markdown over golang.org/x/net/html.
	"toolweb": {ours: []string{"tools"}, external: []string{"github.com/JohannesKaufmann/html-to-markdown/v2", "golang.org/x/net"}},
	// Slash commands: the built-ins' prompts and the user's command
	// files; the bridge offers and runs them.
	"slash":   {ours: []string{"tools"}, external: []string{}},
	"agent":   {ours: []string{"llm", "tools", "session"}},
	"present": {ours: []string{"acp", "session", "tools"}},
	// The bridge asks the permission questions, so it holds the session's
	// permission memory and modes (the first sketch's row lacked permission); its
	// model and thinking selectors show the endpoint's model list and set
	// the request's thinking fields (llm's model facts, a leaf package);
	// it starts the MCP servers the editor names for a session (toolmcp),
	// as the ACP request gives them.
	"bridge": {ours: []string{"acp", "agent", "session", "tools", "present", "permission", "llm", "toolmcp", "slash", "toolsub", "checkpoint", "internal/agentcmd"}},
	"server": {ours: []string{anyOurs}},
	// Flags, demo and diff: the server and what the flags need; never the
	// parts the server assembles.
	"cmd/dsh-acp": {ours: []string{"server", "llm", "acp", "permission", "sandbox", "credentials", "internal/acpclient", "internal/diffcmd", "internal/wiretap"}},
	// The command sandbox knows no tool; its helper and process reader
	// take only a few packages of the standard library and decimal (for
	// strconv), so that the helper starts before the heavy packages
	// initialize.
	"sandbox":                   {ours: []string{"sandbox/internal/helper", "sandbox/internal/proctree"}, external: []string{"github.com/landlock-lsm/go-landlock", "golang.org/x/sys"}},
	"sandbox/internal/helper":   {ours: []string{"sandbox/internal/proctree", "sandbox/internal/decimal"}, external: []string{}},
	"sandbox/internal/proctree": {ours: []string{"sandbox/internal/decimal"}, external: []string{}},
	"sandbox/internal/decimal":  {ours: nil, external: []string{}},

	"hunks/internal/benchcases": {},
	"tools/toolstest":           {ours: []string{"tools"}},
	"internal/acpclient":        {ours: []string{"acp"}},
	// The agent's own commands (/review's git) run through the sandbox.
	"internal/agentcmd": {ours: []string{"sandbox"}, external: []string{}},
	"internal/acptest":  {},
	"internal/diffcmd":  {ours: []string{"hunks"}},
	"internal/e2etest":  {},
	"internal/gentree":  {},
	"internal/gittest":  {},
	// The analyzer for switches over closed sets and its command: the
	// analysis framework, nothing of ours to check against.
	"internal/exhaustive":                {ours: nil, external: []string{"golang.org/x/tools/go/analysis"}},
	"internal/exhaustive/cmd/exhaustive": {ours: []string{"internal/exhaustive"}, external: []string{"golang.org/x/tools/go/analysis"}},
	"internal/layering":                  {},
	// The release's targets, archives and registry entry; its helper
	// command for scripts/release.sh.
	"packaging":                 {ours: nil, external: []string{}},
	"packaging/cmd/releasetool": {ours: []string{"packaging"}, external: []string{}},
	"internal/unpriv":           {},
	// Counts of a tool call's work for tests: stdlib only.
	"internal/probe": {},
	// The debug log and trace of the ACP lines on the pipes: stdlib only.
	"internal/wiretap": {},
	"interop":          {},
}

// TestImportRules checks every package's non-test files against rules.
// Test files may import more (a bridge test may run the real tools).
func TestImportRules(t *testing.T) {
	root, module := moduleRoot(t)
	imports, err := packageImports(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 10 {
		t.Fatalf("found only %d packages under %s", len(imports), root)
	}
	for _, v := range violations(module, imports, rules) {
		t.Error(v)
	}
}

// TestRulesExist: every row of rules is a package that exists, so the
// table stays the layering of the code.
func TestRulesExist(t *testing.T) {
	root, _ := moduleRoot(t)
	pkgs, err := packageDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range rules {
		if !pkgs[pkg] {
			t.Errorf("rules has a row for %s, which is no package: remove it", pkg)
		}
	}
}

// TestReadmePackageTable: the package table of the README's Development
// section lists every package of the module, and only those.
func TestReadmePackageTable(t *testing.T) {
	root, _ := moduleRoot(t)
	pkgs, err := packageDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed, err := readmePackages(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages under %s", len(pkgs), root)
	}
	for pkg := range pkgs {
		if !listed[pkg] {
			t.Errorf("README.md's package table (## Development) has no row for %s", pkg)
		}
	}
	for pkg := range listed {
		if !pkgs[pkg] {
			t.Errorf("README.md's package table lists %s, which is no package", pkg)
		}
	}
}

// packageDirs returns the directories under root, relative to it, that
// hold Go files (tests included: interop is a package of tests only),
// skipping what packageImports skips.
func packageDirs(root string) (map[string]bool, error) {
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	return out, err
}

// readmePackages returns the packages named in the first cell of the
// table that opens the README's "## Development" section: backquoted
// paths, several to a cell separated by commas.
func readmePackages(readme string) (map[string]bool, error) {
	_, dev, ok := strings.Cut(readme, "\n## Development\n")
	if !ok {
		return nil, fmt.Errorf("README.md has no \"## Development\" section")
	}
	out := map[string]bool{}
	inTable := false
	for _, line := range strings.Split(dev, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, name := range strings.Split(cells[1], ",") {
			name = strings.TrimSpace(name)
			if unq, ok := strings.CutPrefix(name, "`"); ok && strings.HasSuffix(unq, "`") {
				out[strings.TrimSuffix(unq, "`")] = true
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("README.md's Development section opens with no package table")
	}
	return out, nil
}

// TestViolationsCatches: the checker reports each kind of break.
func TestViolationsCatches(t *testing.T) {
	const m = "example.com/m"
	imports := map[string][]string{
		"tools":       {"fmt", m + "/acp"},                       // tools importing acp
		"acp":         {"encoding/json", m + "/tools"},           // acp importing ours
		"llm":         {"net/http", "github.com/some/dep"},       // an outside module in llm
		"permission":  {m + "/toolfs"},                           // permission knowing a tool package
		"server":      {m + "/bridge", m + "/cmd/dsh-acp"},       // server importing a command
		"cmd/dsh-acp": {m + "/server", m + "/agent"},             // cmd doing the wiring again
		"newpkg":      {"fmt"},                                   // a package with no rule
		"bridge":      {m + "/acp", m + "/permission", "errors"}, // fine
	}
	got := violations(m, imports, rules)
	want := []string{
		"acp imports example.com/m/tools",
		"cmd/dsh-acp imports example.com/m/agent",
		"llm imports github.com/some/dep",
		"newpkg has no rule",
		"permission imports example.com/m/toolfs",
		"server imports example.com/m/cmd/dsh-acp",
		"tools imports example.com/m/acp",
	}
	if len(got) != len(want) {
		t.Fatalf("violations:\n%s\nwant %d starting with:\n%s", strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("violation %d = %q, want it to start with %q", i, got[i], want[i])
		}
	}
}

// violations returns one sorted line per import that rules forbid, and
// one per package without a rule. imports maps a package path relative to
// the module to its non-test imports.
func violations(module string, imports map[string][]string, rules map[string]rule) []string {
	var out []string
	for pkg, imps := range imports {
		r, ok := rules[pkg]
		if !ok {
			out = append(out, pkg+" has no rule in internal/layering/layering_test.go: decide what it may import")
			continue
		}
		for _, imp := range imps {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
				if !allowedOurs(r.ours, dep) {
					out = append(out, fmt.Sprintf("%s imports %s, which its layer may not (allowed: %s)", pkg, imp, describe(r.ours)))
				}
				continue
			}
			if !isStdlib(imp) && r.external != nil && !hasPrefix(r.external, imp) {
				out = append(out, fmt.Sprintf("%s imports %s, an outside module its layer may not use (allowed: %s)", pkg, imp, describe(r.external)))
			}
		}
	}
	sort.Strings(out)
	return out
}

func allowedOurs(allowed []string, dep string) bool {
	for _, a := range allowed {
		if a == anyOurs && dep != "cmd" && !strings.HasPrefix(dep, "cmd/") {
			return true
		}
		if a == dep {
			return true
		}
	}
	return false
}

// hasPrefix reports whether imp is one of prefixes or below one of them.
func hasPrefix(prefixes []string, imp string) bool {
	for _, p := range prefixes {
		if imp == p || strings.HasPrefix(imp, p+"/") {
			return true
		}
	}
	return false
}

func describe(list []string) string {
	if len(list) == 0 {
		return "nothing"
	}
	return strings.Join(list, ", ")
}

// isStdlib reports whether imp is a standard-library path: its first
// element has no dot.
func isStdlib(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

// moduleRoot finds the go.mod above the working directory and returns its
// directory and module path.
func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					if unq, err := strconv.Unquote(rest); err == nil {
						rest = unq
					}
					return dir, strings.TrimSpace(rest)
				}
			}
			t.Fatalf("%s/go.mod has no module line", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// packageImports parses the imports of every non-test .go file under root
// (skipping testdata, node_modules and directories starting with "." or
// "_", as the go tool does) and returns them by package directory relative
// to root, deduplicated. Build tags are ignored: a file counts for every
// platform.
func packageImports(root string) (map[string][]string, error) {
	seen := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if seen[rel] == nil {
			seen[rel] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", path, imp.Path.Value, err)
			}
			seen[rel][p] = true
		}
		return nil
	})
	out := map[string][]string{}
	for pkg, set := range seen {
		out[pkg] = []string{} // a package importing nothing is still one
		for p := range set {
			out[pkg] = append(out[pkg], p)
		}
		sort.Strings(out[pkg])
	}
	return out, err
}
