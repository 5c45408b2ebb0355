package permission

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// twoWordCommands are commands whose prefix is their first two words
// (`git status`, `npm test`, `go build`, ...).
var twoWordCommands = map[string]bool{
	"git": true, "npm": true, "go": true, "cargo": true, "docker": true, "kubectl": true,
	"pip": true, "yarn": true, "pnpm": true, "make": true,
}

// BashPrefixes parses cmd as bash and returns the prefix of every simple
// command in it, in order: the first word, or the first two for
// twoWordCommands. ok is false when the command cannot be judged and must
// always be asked about:
//   - it does not parse, or a command name is not a plain word;
//   - it holds a command or process substitution, or anything bash
//     evaluates as code or arithmetic (parameter expansions with
//     operators such as ${x@P} or ${!x}, $((...)), ((...)), let, array
//     subscripts in assignments, declare/typeset/local/export/readonly);
//   - a command is run with variable assignments before it
//     (GIT_CONFIG_*=... git status, LD_PRELOAD=... ls);
//   - a redirection writes or reads a file outside cwd, a target that is
//     not a plain word (variables, globs, ~), a relative target after a
//     cd/pushd/popd, or a fd duplication to a file (>& file).
//
// /dev/null, /dev/stdout and /dev/stderr are fine.
func BashPrefixes(cmd, cwd string) (prefixes []string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, false
	}
	ok = true
	changesDir := false
	var redirs []*syntax.Redirect
	syntax.Walk(f, func(n syntax.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.DeclClause:
			ok = false
		case *syntax.ParamExp:
			if !plainParam(n) {
				ok = false
			}
		case *syntax.Assign:
			if n.Index != nil {
				ok = false
			}
		case *syntax.Redirect:
			redirs = append(redirs, n)
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true // assignments only
			}
			if len(n.Assigns) > 0 {
				ok = false
				return false
			}
			name := n.Args[0].Lit()
			if name == "" {
				ok = false
				return false
			}
			switch name {
			case "cd", "pushd", "popd":
				changesDir = true
			}
			prefix := name
			if twoWordCommands[name] && len(n.Args) > 1 {
				if second := n.Args[1].Lit(); second != "" {
					prefix += " " + second
				}
			}
			prefixes = append(prefixes, prefix)
		}
		return true
	})
	for _, r := range redirs {
		ok = ok && redirectOK(r, cwd, changesDir)
	}
	if !ok {
		return nil, false
	}
	return prefixes, true
}

// plainParam reports whether a parameter expansion only substitutes a
// variable's value ($x, ${x}, ${#x}): no operator bash could use to run
// code or evaluate arithmetic.
func plainParam(p *syntax.ParamExp) bool {
	return p.Param != nil && !p.Excl && p.Index == nil && p.Slice == nil && p.Repl == nil &&
		p.Exp == nil && p.Names == 0 && p.NestedParam == nil && len(p.Modifiers) == 0
}

// redirectOK reports whether a redirection stays inside cwd.
func redirectOK(r *syntax.Redirect, cwd string, changesDir bool) bool {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return true
	}
	if r.Word == nil {
		return true
	}
	target := r.Word.Lit()
	if r.Op == syntax.DplIn || r.Op == syntax.DplOut {
		// <&N, >&N and >&- duplicate or close descriptors; >& word
		// (not a number) writes stdout and stderr to a file.
		if target == "-" || (target != "" && strings.Trim(target, "0123456789") == "") {
			return true
		}
	}
	switch target {
	case "":
		return false
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	if strings.HasPrefix(target, "~") || strings.ContainsAny(target, "*?[") {
		return false
	}
	if changesDir && !strings.HasPrefix(target, "/") {
		return false
	}
	return Inside(cwd, Resolve(cwd, target))
}

// RedirectsOutside reports whether cmd redirects to or from a file that
// plainly lies outside cwd (a literal target, resolved): what even
// bypassPermissions asks about. Targets it cannot judge (variables,
// globs) are not counted here; BashPrefixes refuses them.
func RedirectsOutside(cmd, cwd string) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return false
	}
	outside := false
	syntax.Walk(f, func(n syntax.Node) bool {
		r, isRedir := n.(*syntax.Redirect)
		if !isRedir || r.Word == nil || outside {
			return !outside
		}
		target := r.Word.Lit()
		switch {
		case r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc:
		case target == "" || target == "-" || target == "/dev/null" || target == "/dev/stdout" || target == "/dev/stderr":
		case (r.Op == syntax.DplIn || r.Op == syntax.DplOut) && strings.Trim(target, "0123456789") == "":
		case strings.HasPrefix(target, "~"):
			outside = true
		default:
			outside = !Inside(cwd, Resolve(cwd, target))
		}
		return !outside
	})
	return outside
}
