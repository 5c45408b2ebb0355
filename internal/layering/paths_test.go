package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// pathCalls are the functions that join, clean or make absolute a path
// as text. A tool that applies one to a path argument judges or opens
// another file than the kernel would ("link/.." is the link target's
// parent, not the link's folder); tools resolve their arguments with
// permission.ResolvePath / ResolveShown instead.
var pathCalls = map[string]bool{"Join": true, "Clean": true, "Abs": true}

// pathCallsAllowed are the places in tool packages (package/file.go:Func)
// that may call pathCalls, each with why it is no argument path: a
// place added anywhere else fails the test, so that it is looked at.
var pathCallsAllowed = map[string]string{
	"toolbash/manager.go:createSpill":    "the agent's private spill folder and a name it made up",
	"toolfs/disk.go:createTemp":          "the folder of the resolved target (beneath its root handle) and a made-up temporary name",
	"toolfs/disk.go:removeStale":         "the folder of the resolved target and the names read from it",
	"toolfs/disk_windows.go:writable":    "the folder of the resolved target and its base name",
	"toolsearch/walk.go:newWalk":         "the resolved root's ancestors and the name .git",
	"toolsearch/walk.go:rootSet":         "the resolved top folder and the names of folders below it on the way to the resolved root",
	"toolsearch/walk.go:readIgnoreFiles": "a walked folder and the ignore files' fixed names",
	"toolweb/record.go:path":             "the --record/--replay folder the user gave and a numbered name",
}

// TestToolsResolvePaths: no tool package (tool*, but the tools
// framework) joins, cleans or makes absolute a path outside the places
// listed in pathCallsAllowed; and every listed place still exists, so
// the list stays true.
func TestToolsResolvePaths(t *testing.T) {
	root, _ := moduleRoot(t)
	dirs, err := filepath.Glob(filepath.Join(root, "tool*"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var bad []string
	for _, dir := range dirs {
		pkg := filepath.Base(dir)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || pkg == "tools" {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			for _, place := range pathCallPlaces(t, f) {
				key := pkg + "/" + filepath.Base(f) + ":" + place.fn
				seen[key] = true
				if _, ok := pathCallsAllowed[key]; !ok {
					bad = append(bad, key+" ("+place.call+", line "+strconv.Itoa(place.line)+")")
				}
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: a tool package joins or cleans a path itself; resolve arguments with permission.ResolvePath or ResolveShown (or, for a path that is no argument, list the place in pathCallsAllowed with why)", b)
	}
	for key := range pathCallsAllowed {
		if !seen[key] {
			t.Errorf("pathCallsAllowed lists %s, which calls none of %v any more: remove it", key, pathCalls)
		}
	}
}

// pathCall is one call of pathCalls: the function it is in, the call as
// written, and its line.
type pathCall struct {
	fn, call string
	line     int
}

// pathCallPlaces returns the pathCalls calls of the Go file at path
// (path/filepath's, under whatever name the file imports it).
func pathCallPlaces(t *testing.T, path string) []pathCall {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p != "path/filepath" && p != "path" {
			continue
		}
		name := filepath.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = true
	}
	var out []pathCall
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] && pathCalls[sel.Sel.Name] {
				out = append(out, pathCall{fn: fd.Name.Name, call: x.Name + "." + sel.Sel.Name, line: fset.Position(call.Pos()).Line})
			}
			return true
		})
	}
	return out
}
