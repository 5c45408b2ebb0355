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
// always be asked about: it does not parse, a command name is not a plain
// word, or it contains a command or process substitution, or a
// redirection to a file outside cwd (or to a path that is not a plain
// word). /dev/null, /dev/stdout and /dev/stderr are fine.
func BashPrefixes(cmd, cwd string) (prefixes []string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, false
	}
	ok = true
	syntax.Walk(f, func(n syntax.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			ok = false
		case *syntax.Redirect:
			if !redirectOK(n, cwd) {
				ok = false
			}
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true // assignments only
			}
			name := n.Args[0].Lit()
			if name == "" {
				ok = false
				return false
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
	if !ok {
		return nil, false
	}
	return prefixes, true
}

// redirectOK reports whether a redirection stays inside cwd.
func redirectOK(r *syntax.Redirect, cwd string) bool {
	switch r.Op {
	case syntax.DplIn, syntax.DplOut, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return true
	}
	if r.Word == nil {
		return true
	}
	target := r.Word.Lit()
	switch target {
	case "":
		return false
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	return Inside(cwd, Resolve(cwd, target))
}
