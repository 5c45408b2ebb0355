package permission

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// twoWordCommands are commands whose prefix is their first two words
// (`git status`, `npm test`, `go build`, ...).
var twoWordCommands = map[string]bool{
	"git": true, "npm": true, "go": true, "cargo": true, "docker": true, "kubectl": true,
	"pip": true, "yarn": true, "pnpm": true, "make": true,
}

// devices are the files a redirection or argument may name outside the
// project without asking: they store nothing.
var devices = map[string]bool{
	"/dev/null": true, "/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true,
	"/dev/zero": true, "/dev/tty": true,
}

// nameBuiltins are builtins that take variable names as arguments: a
// name with a subscript (`a[$(cmd)]`) makes bash evaluate the subscript
// as arithmetic, which runs command substitutions in it (read, printf
// -v, test -v were seen doing so; the others are listed on suspicion).
var nameBuiltins = map[string]bool{
	"read": true, "mapfile": true, "readarray": true, "unset": true, "wait": true, "getopts": true,
}

// bashFacts is what the text analysis of one command line finds.
type bashFacts struct {
	// parsed: the line parses as bash.
	parsed bool
	// hidden: something bash evaluates as code or arithmetic that the
	// text does not show (see BashPrefixes), a variable assignment, or a
	// command name that is not a plain word.
	hidden bool
	// prefixes of the simple commands, in order (see BashPrefixes).
	prefixes []string
	// redirect: a redirection to or from a path outside the project, or
	// with a target that cannot be judged from the text.
	redirect bool
	// argument: an argument after a command's prefix that names a path
	// outside the project, or that cannot be judged (an expansion, ~).
	argument bool
	// runsCode: a redirection or argument naming a file that runs code
	// (RunsCode).
	runsCode bool
	// others are the arguments that make their program run other code
	// (runsOtherRules), in order.
	others []otherArg
	// runners are the prefixes of commands that run another command as
	// their job (runners): never remembered, never covered.
	runners []string
}

// covered reports whether remembered prefixes may decide the command:
// everything in it was judged and stays inside the project.
func (f bashFacts) covered() bool {
	return f.parsed && !f.hidden && !f.redirect && !f.argument && !f.runsCode && len(f.others) == 0 && len(f.runners) == 0
}

// rememberable are the prefixes an "always" answer stores for the
// command: its prefixes but the runners', none when its text cannot be
// judged (it does not parse or hides evaluation).
func (f bashFacts) rememberable() []string {
	if !f.parsed || f.hidden {
		return nil
	}
	var out []string
	for _, p := range f.prefixes {
		if !slices.Contains(f.runners, p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// bashScope is where a command line's paths are judged.
type bashScope struct {
	cwd string // the session cwd (RunsCode is judged below it)
	dir string // the resolved directory the command starts in
	// roots are the resolved directories its paths may lie in without
	// asking: the session cwd and, once approved, an outside workdir.
	roots []string
}

func newScope(cwd, dir string) bashScope {
	root := Resolve(cwd, cwd)
	sc := bashScope{cwd: cwd, dir: root, roots: []string{root}}
	if dir != "" {
		sc.dir = Resolve(cwd, dir)
		if !within(root, sc.dir) {
			sc.roots = append(sc.roots, sc.dir)
		}
	}
	return sc
}

// BashPrefixes parses cmd as bash and returns the prefix of every simple
// command in it, in order: the first word, or the first two for
// twoWordCommands. ok is false when remembered prefixes cannot decide the
// command, so it must be asked about:
//   - it does not parse, or a command name is not a plain word;
//   - hidden evaluation: a command or process substitution, or anything
//     bash evaluates as code or arithmetic where a command substitution
//     hidden in a variable's value would run: $((...)), ((...)),
//     for ((...)), let, [[ ... ]] with an arithmetic comparison (-eq,
//     -lt, ...) or -v/-R, array subscripts (a[i]=, a=([i]=v), ${a[i]}),
//     parameter expansions with operators (${x@P}, ${!x}, ${x:i}),
//     declare/typeset/local/export/readonly, and a subscripted name given
//     to read, printf -v, test -v, mapfile, unset, wait or getopts;
//   - any variable assignment, standalone or before a command
//     (`PATH=/tmp/x:$PATH; git status`, `GIT_CONFIG_*=... git status`):
//     the next command may see it in its environment;
//   - a redirection whose target, after quote removal and escapes
//     (`.\./x` is `../x`), lies outside cwd (symlinks and `..` resolved
//     the kernel's way), contains an expansion ($x, $(...)), a glob or a
//     leading ~, is relative after a cd that cannot be followed, or is an
//     fd duplication to a file (>& file);
//   - an argument after the prefix that names a path outside cwd: an
//     absolute path, one with `..` or through a symlink that leads out, a
//     leading ~, the value of `--opt=PATH` or `-XPATH`, a glob matching
//     such a path; or an argument with an expansion, which could be one;
//   - a redirection or argument naming a file that runs code (RunsCode);
//   - an option or assignment that makes its program run other code
//     (runsOtherRules: make --eval or VAR=..., go -exec, cargo --config,
//     npm --node-options, git --upload-pack, ...), or a command whose
//     job is to run another (runners: env, xargs, sh, npx, ...).
//
// /dev/null, /dev/stdout, /dev/stderr (and stdin, zero, tty) are fine.
// A `cd DIR` (or pushd) with a literal DIR makes later relative paths
// judged against DIR as well as cwd.
func BashPrefixes(cmd, cwd string) (prefixes []string, ok bool) {
	f := analyzeBash(cmd, newScope(cwd, ""))
	if !f.covered() {
		return nil, false
	}
	return f.prefixes, true
}

// analyzeBash finds the facts of cmd in scope sc.
func analyzeBash(cmd string, sc bashScope) bashFacts {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return bashFacts{}
	}
	f := bashFacts{parsed: true}
	var (
		calls  []*syntax.CallExpr
		redirs []*syntax.Redirect
	)
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ArithmCmd,
			*syntax.LetClause, *syntax.DeclClause, *syntax.CStyleLoop, *syntax.ArrayElem, *syntax.Assign:
			f.hidden = true
		case *syntax.ParamExp:
			if !plainParam(n) {
				f.hidden = true
			}
		case *syntax.UnaryTest:
			if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
				f.hidden = true
			}
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				f.hidden = true
			}
		case *syntax.Redirect:
			redirs = append(redirs, n)
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true // assignments only (hidden, see *syntax.Assign)
			}
			calls = append(calls, n)
		}
		return true
	})
	j := judge{sc: sc, bases: []string{sc.dir}}
	words := make([]int, len(calls)) // prefix words per call; 0: no prefix
	for i, c := range calls {
		prefix, n, ok := callPrefix(c)
		if !ok {
			f.hidden = true
			continue
		}
		words[i] = n
		f.prefixes = append(f.prefixes, prefix)
		name := valueOf(c.Args[0]).text
		if isRunner(name, prefix) {
			f.runners = append(f.runners, prefix)
		}
		if w, ok := runsOther(c, name, prefix, n); ok {
			f.others = append(f.others, otherArg{prefix, w})
		}
		if namesHidden(c) {
			f.hidden = true
		}
		j.follow(c)
	}
	// Paths are judged once every cd target is known.
	for i, c := range calls {
		if words[i] == 0 {
			continue
		}
		for _, a := range c.Args[words[i]:] {
			bad, code := j.argument(a)
			f.argument = f.argument || bad
			f.runsCode = f.runsCode || code
		}
	}
	for _, r := range redirs {
		bad, code := j.redirect(r)
		f.redirect = f.redirect || bad
		f.runsCode = f.runsCode || code
	}
	return f
}

// callPrefix returns the prefix of c and how many of its words it takes;
// ok is false when the command name is not a plain word.
func callPrefix(c *syntax.CallExpr) (prefix string, words int, ok bool) {
	name := valueOf(c.Args[0])
	if !name.plain() || name.text == "" || strings.ContainsAny(name.text, " \t\n") {
		return "", 0, false
	}
	prefix, words = name.text, 1
	if twoWordCommands[name.text] && len(c.Args) > 1 {
		if second := valueOf(c.Args[1]); second.plain() && second.text != "" && !strings.ContainsAny(second.text, " \t\n") {
			prefix += " " + second.text
			words = 2
		}
	}
	return prefix, words, true
}

// namesHidden reports whether c gives a builtin that takes variable
// names a name bash would evaluate a subscript of (see nameBuiltins):
// one with '[' in it, or one that is not a plain word.
func namesHidden(c *syntax.CallExpr) bool {
	args := c.Args
	for len(args) > 1 {
		// `command read ...`, `builtin printf ...`: the builtin is next.
		if n := valueOf(args[0]); n.plain() && (n.text == "command" || n.text == "builtin") {
			args = args[1:]
			continue
		}
		break
	}
	name := valueOf(args[0]).text
	suspect := func(w *syntax.Word) bool {
		v := valueOf(w)
		return !v.literal || strings.Contains(v.text, "[")
	}
	switch {
	case nameBuiltins[name]:
		for _, a := range args[1:] {
			if suspect(a) {
				return true
			}
		}
	case name == "printf" || name == "test" || name == "[":
		// printf -v NAME (or -vNAME); test -v NAME, test -R NAME.
		for i := 1; i < len(args); i++ {
			v := valueOf(args[i])
			takesName := v.text == "-v" || v.text == "-R" && name != "printf"
			if takesName && i+1 < len(args) && suspect(args[i+1]) {
				return true
			}
			if name == "printf" && len(v.text) > 2 && strings.HasPrefix(v.text, "-v") && suspect(args[i]) {
				return true
			}
		}
	}
	return false
}

// plainParam reports whether a parameter expansion only substitutes a
// variable's value ($x, ${x}, ${#x}): no operator bash could use to run
// code or evaluate arithmetic.
func plainParam(p *syntax.ParamExp) bool {
	return p.Param != nil && !p.Excl && p.Index == nil && p.Slice == nil && p.Repl == nil &&
		p.Exp == nil && p.Names == 0 && p.NestedParam == nil && len(p.Modifiers) == 0
}
