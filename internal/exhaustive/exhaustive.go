// Package exhaustive is an analyzer (golang.org/x/tools/go/analysis) for
// switches over this module's closed sets: a switch names every member
// of the set, or has a default clause that says in a comment why the
// members it leaves out need nothing. It turns a member added to a set
// (a new card view, a new session update kind, a new permission class)
// into a finding at every switch that has not decided what to do with
// it, instead of a silent fall-through.
//
// The closed sets are recognised by their declaration, nothing is
// listed by hand:
//
//   - A sealed interface: a named interface of this module with an
//     unexported method, so that only its own package can implement it
//     (tools.ToolCallView, tools.ToolResultView, acp.Update,
//     acp.ToolCallContent, session.Data). Its members are the named
//     types declared in that package's non-test files that implement it
//     (T, or *T when only the pointer does). A type switch over a value
//     of that interface type is checked; a case covers a member when it
//     names the member's type, or an interface the member implements.
//   - An enum: a named type of this module whose underlying type is a
//     boolean, number or string, and of which its package declares
//     constants (tools.Class, tools.Kind, llm.DeltaKind,
//     permission.Decision, acp.StopReason, ...). Its members are those
//     constants (non-test files); a value switch whose tag has that type
//     is checked, and a case covers the members of its constant value.
//
// "This module" is every package whose path has the -module prefix
// (default github.com/dsh-acp/dsh-acp): sets of the standard library and
// of other modules (reflect.Kind, go/ast.Stmt) are not ours to close.
//
// A documented default is a default clause holding a comment (on the
// `default:` line or in its body). A switch that names every member may
// still have a default, documented or not (for nil, or values outside the
// set).
//
// Run it with `go tool exhaustive ./...` (the module pins
// ./cmd/exhaustive as a tool), with `go vet -vettool=$(go tool -n
// exhaustive) ./...`, or through its test, which checks the whole module
// (`go test ./internal/exhaustive`).
package exhaustive

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"reflect"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// Analyzer reports switches over a closed set that neither name every
// member nor have a documented default (see the package doc).
var Analyzer = &analysis.Analyzer{
	Name: "exhaustive",
	Doc: "check that switches over this module's closed sets (sealed interfaces, enums) name every member " +
		"or have a default clause whose comment says why the rest need nothing",
	Run:        run,
	ResultType: reflect.TypeFor[*Result](),
}

// Result is what the analyzer checked in one package: one entry per
// switch over a closed set, "file:line: set" (whether it passed or
// not), so that a driver can tell a clean run from one that found
// nothing to check.
type Result struct {
	Checked []string
}

// module is the -module flag: the import path prefix of the packages
// whose sets are closed.
var module = "github.com/dsh-acp/dsh-acp"

func init() {
	Analyzer.Flags.StringVar(&module, "module", module, "import path prefix (\"/\"-bounded) of the packages whose sealed interfaces and enums are closed sets")
}

func run(pass *analysis.Pass) (any, error) {
	c := &switchChecker{pass: pass, sets: map[types.Type]*closedSet{}, result: &Result{}}
	for _, f := range pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch s := n.(type) {
			case *ast.TypeSwitchStmt:
				c.typeSwitch(f, s)
			case *ast.SwitchStmt:
				c.valueSwitch(f, s)
			default:
				// Only switch statements are checked; every other node
				// is walked into for the switches it holds.
			}
			return true
		})
	}
	return c.result, nil
}

// member is one element of a closed set: a variant type of a sealed
// interface, or a constant of an enum.
type member struct {
	name string         // as written in a report, qualified by package name
	pos  token.Pos      // its declaration
	typ  types.Type     // the variant type (sealed interfaces)
	val  constant.Value // the constant's value (enums)
}

// closedSet is a sealed interface or an enum with its members, in
// declaration order.
type closedSet struct {
	name    string
	members []member
}

type switchChecker struct {
	pass   *analysis.Pass
	sets   map[types.Type]*closedSet // memo; nil value: not a closed set
	result *Result
}

// ours reports whether pkg belongs to the module whose sets are closed.
func ours(pkg *types.Package) bool {
	if pkg == nil {
		return false
	}
	p := pkg.Path()
	return p == module || strings.HasPrefix(p, module+"/")
}

// set returns the closed set t is, or nil.
func (c *switchChecker) set(t types.Type) *closedSet {
	if s, ok := c.sets[t]; ok {
		return s
	}
	s := c.build(t)
	c.sets[t] = s
	return s
}

func (c *switchChecker) build(t types.Type) *closedSet {
	named, ok := types.Unalias(t).(*types.Named)
	if !ok || named.TypeParams().Len() > 0 {
		return nil
	}
	obj := named.Obj()
	if !ours(obj.Pkg()) {
		return nil
	}
	set := &closedSet{name: obj.Pkg().Name() + "." + obj.Name()}
	scope := obj.Pkg().Scope()
	switch u := named.Underlying().(type) {
	case *types.Interface:
		if !sealed(u) {
			return nil
		}
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() || c.inTestFile(tn) {
				continue
			}
			vt := tn.Type()
			if _, isIface := vt.Underlying().(*types.Interface); isIface {
				continue
			}
			if n, ok := vt.(*types.Named); ok && n.TypeParams().Len() > 0 {
				continue
			}
			switch {
			case types.Implements(vt, u):
			case types.Implements(types.NewPointer(vt), u):
				vt = types.NewPointer(vt)
			default:
				continue
			}
			set.members = append(set.members, member{name: c.typeName(vt), pos: tn.Pos(), typ: vt})
		}
	case *types.Basic:
		if u.Info()&(types.IsBoolean|types.IsNumeric|types.IsString) == 0 {
			return nil
		}
		for _, name := range scope.Names() {
			k, ok := scope.Lookup(name).(*types.Const)
			if !ok || !types.Identical(k.Type(), named) || c.inTestFile(k) {
				continue
			}
			set.members = append(set.members, member{name: obj.Pkg().Name() + "." + k.Name(), pos: k.Pos(), val: k.Val()})
		}
	default:
		// Structs, maps, funcs and the like have no closed set of
		// values.
		return nil
	}
	if len(set.members) == 0 {
		return nil
	}
	sort.SliceStable(set.members, func(i, j int) bool { return c.declared(set.members[i]) < c.declared(set.members[j]) })
	return set
}

// sealed reports whether the interface has an unexported method, so that
// only its own package can implement it.
func sealed(u *types.Interface) bool {
	for m := range u.Methods() {
		if !m.Exported() {
			return true
		}
	}
	return false
}

// inTestFile reports whether obj is declared in a _test.go file: a type
// or constant a test adds is not a member of the set the program uses.
func (c *switchChecker) inTestFile(obj types.Object) bool {
	return strings.HasSuffix(c.pass.Fset.Position(obj.Pos()).Filename, "_test.go")
}

// declared orders members by their declaration: file, line, column.
func (c *switchChecker) declared(m member) string {
	p := c.pass.Fset.Position(m.pos)
	return fmt.Sprintf("%s:%09d:%09d", p.Filename, p.Line, p.Column)
}

func (c *switchChecker) typeName(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string { return p.Name() })
}

// typeSwitch checks `switch [x :=] v.(type)` where v's type is a sealed
// interface of ours.
func (c *switchChecker) typeSwitch(f *ast.File, s *ast.TypeSwitchStmt) {
	var x ast.Expr
	switch a := s.Assign.(type) {
	case *ast.AssignStmt:
		x = a.Rhs[0]
	case *ast.ExprStmt:
		x = a.X
	default:
		// The parser gives nothing else for a type switch guard.
		return
	}
	ta, ok := ast.Unparen(x).(*ast.TypeAssertExpr)
	if !ok {
		return
	}
	set := c.set(c.pass.TypesInfo.TypeOf(ta.X))
	if set == nil {
		return
	}
	var cases []types.Type
	for _, cl := range s.Body.List {
		for _, e := range cl.(*ast.CaseClause).List {
			if t := c.pass.TypesInfo.TypeOf(e); t != nil {
				cases = append(cases, t)
			}
		}
	}
	covered := func(m member) bool {
		for _, t := range cases {
			if types.Identical(t, m.typ) {
				return true
			}
			if iface, ok := t.Underlying().(*types.Interface); ok && types.Implements(m.typ, iface) {
				return true
			}
		}
		return false
	}
	c.report(f, s.Switch, s.Body, set, covered)
}

// valueSwitch checks `switch v` where v's type is an enum of ours.
func (c *switchChecker) valueSwitch(f *ast.File, s *ast.SwitchStmt) {
	if s.Tag == nil {
		return
	}
	set := c.set(c.pass.TypesInfo.TypeOf(s.Tag))
	if set == nil {
		return
	}
	var vals []constant.Value
	for _, cl := range s.Body.List {
		for _, e := range cl.(*ast.CaseClause).List {
			if tv, ok := c.pass.TypesInfo.Types[e]; ok && tv.Value != nil {
				vals = append(vals, tv.Value)
			}
		}
	}
	covered := func(m member) bool {
		for _, v := range vals {
			if constant.Compare(v, token.EQL, m.val) {
				return true
			}
		}
		return false
	}
	c.report(f, s.Switch, s.Body, set, covered)
}

// report reports the switch at pos when it misses members and has no
// documented default.
func (c *switchChecker) report(f *ast.File, pos token.Pos, body *ast.BlockStmt, set *closedSet, covered func(member) bool) {
	p := c.pass.Fset.Position(pos)
	c.result.Checked = append(c.result.Checked, fmt.Sprintf("%s:%d: %s", p.Filename, p.Line, set.name))
	var missing []string
	for _, m := range set.members {
		if !covered(m) {
			missing = append(missing, m.name)
		}
	}
	if len(missing) == 0 {
		return
	}
	for i, cl := range body.List {
		if cl.(*ast.CaseClause).List != nil {
			continue
		}
		end := body.Rbrace
		if i+1 < len(body.List) {
			end = body.List[i+1].Pos()
		}
		if hasComment(f, cl.Pos(), end) {
			return
		}
		c.pass.Reportf(pos, "switch over %s misses %s, and its default has no comment saying why they need nothing",
			set.name, strings.Join(missing, ", "))
		return
	}
	c.pass.Reportf(pos, "switch over %s misses %s: add their cases, or a default whose comment says why they need nothing",
		set.name, strings.Join(missing, ", "))
}

// hasComment reports whether f has a comment in [from, to).
func hasComment(f *ast.File, from, to token.Pos) bool {
	for _, g := range f.Comments {
		if g.Pos() >= from && g.Pos() < to {
			return true
		}
	}
	return false
}
