// This file judges what a command's words touch: the folder it runs in
// (followed through cd), its redirections and path arguments against the
// project, and which words are plain literals.

package permission

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// judge judges the paths of one command line.
type judge struct {
	sc bashScope
	// bases are the directories relative paths may be resolved against:
	// where the command starts and every literal cd target in it (a cd
	// may or may not have run by the time a path is used, so a path must
	// be fine against all of them).
	bases []string
	// unknown: a cd whose target the text does not show (none: $HOME, -,
	// an expansion): relative paths cannot be judged.
	unknown bool
}

// follow records the target of a cd, pushd or popd.
func (j *judge) follow(c *syntax.CallExpr) {
	switch valueOf(c.Args[0]).text {
	case "cd", "pushd":
	case "popd":
		return // back to a directory already among the bases
	default:
		return
	}
	var target *wordVal
	for _, a := range c.Args[1:] {
		v := valueOf(a)
		if v.literal && len(v.text) > 1 && strings.HasPrefix(v.text, "-") && v.text != "--" {
			continue // -L, -P, -e, -@
		}
		if v.text == "--" {
			continue
		}
		target = &v
		break
	}
	if target == nil || !target.plain() || target.text == "-" || target.text == "" {
		j.unknown = true
		return
	}
	for _, b := range append([]string(nil), j.bases...) {
		j.bases = append(j.bases, Resolve(b, target.text))
	}
}

// redirect judges one redirection's target: bad when it is outside the
// project or cannot be judged; code when it names a file that runs code.
func (j *judge) redirect(r *syntax.Redirect) (bad, code bool) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return false, false // the word is text, not a file
	}
	if r.Word == nil {
		return false, false
	}
	v := valueOf(r.Word)
	if !v.plain() {
		return true, false
	}
	if r.Op == syntax.DplIn || r.Op == syntax.DplOut {
		// <&N, >&N, >&N- and >&- duplicate, move or close descriptors;
		// >& word (not a number) writes stdout and stderr to a file.
		if fd := strings.TrimSuffix(v.text, "-"); fd == "" || strings.Trim(fd, "0123456789") == "" {
			return false, false
		}
	}
	if v.text == "" {
		return true, false
	}
	return j.path(v.text)
}

// argument judges one argument after a command's prefix: the word itself,
// the value after its first '=' (--output=PATH, of=PATH) and, for a
// short option with a value attached (-I/usr/include), the value.
func (j *judge) argument(w *syntax.Word) (bad, code bool) {
	v := valueOf(w)
	if !v.literal || v.tilde {
		return true, false
	}
	candidates := []string{v.text}
	if _, after, ok := strings.Cut(v.text, "="); ok {
		candidates = append(candidates, after)
	}
	if len(v.text) > 2 && v.text[0] == '-' && v.text[1] != '-' {
		candidates = append(candidates, v.text[2:])
	}
	for _, c := range candidates {
		if c == "" || c == "-" || c == "--" {
			continue
		}
		if strings.HasPrefix(c, "~") {
			return true, false // bash expands ~ after '=' too (x=~/y)
		}
		var b, k bool
		if v.glob {
			b, k = j.glob(c)
		} else {
			b, k = j.path(c)
		}
		bad, code = bad || b, code || k
	}
	return bad, code
}

// glob judges a pattern bash may expand: every file it matches now, and
// the pattern itself (what bash passes when nothing matches).
func (j *judge) glob(pattern string) (bad, code bool) {
	bad, code = j.path(pattern)
	bases := j.bases
	if filepath.IsAbs(pattern) {
		bases = []string{"/"}
	} else if j.unknown {
		return true, code
	}
	for _, base := range bases {
		matches, _ := filepath.Glob(filepath.Join(base, pattern))
		for _, m := range matches {
			b, k := j.path(m)
			bad, code = bad || b, code || k
		}
	}
	return bad, code
}

// path judges one literal path: bad when, resolved against any base, it
// lies outside the roots; code when it names a file that runs code.
func (j *judge) path(p string) (bad, code bool) {
	if devices[p] {
		return false, false
	}
	bases := j.bases
	if filepath.IsAbs(p) {
		bases = []string{"/"}
	} else if j.unknown {
		return true, false
	}
	for _, base := range bases {
		r := Resolve(base, p)
		in := false
		for _, root := range j.sc.roots {
			in = in || within(root, r)
		}
		bad = bad || !in
		code = code || RunsCode(j.sc.cwd, r)
	}
	return bad, code
}

// wordVal is a shell word's value as bash passes it, when the text
// shows it.
type wordVal struct {
	// text is the word after quote removal and escapes: `.\./x` is
	// "../x", `"a\$b"` is "a$b", 'c\d' is `c\d`.
	text string
	// literal: no expansion ($x, $(...), $'...' with escapes, {a,b},
	// extended globs): text is exactly what bash passes (before globbing
	// and tilde expansion).
	literal bool
	// tilde: an unquoted ~ starts the word (bash expands it to a home).
	tilde bool
	// glob: an unquoted *, ? or [ (bash may replace the word by the
	// file names it matches).
	glob bool
}

// plain reports whether the value is literal and neither globbed nor
// tilde-expanded: text is the exact string bash uses.
func (v wordVal) plain() bool { return v.literal && !v.tilde && !v.glob }

// valueOf computes w's value (see wordVal).
func valueOf(w *syntax.Word) wordVal {
	v := wordVal{literal: !hasBraces(w)}
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			s := p.Value
			if i == 0 && strings.HasPrefix(s, "~") {
				v.tilde = true
			}
			for k := 0; k < len(s); k++ {
				c := s[k]
				if c == '\\' {
					// An unquoted backslash quotes the next character
					// (a backslash-newline was removed by the parser).
					if k+1 < len(s) {
						k++
						b.WriteByte(s[k])
					}
					continue
				}
				if c == '*' || c == '?' || c == '[' {
					v.glob = true
				}
				b.WriteByte(c)
			}
		case *syntax.SglQuoted:
			if p.Dollar && strings.ContainsRune(p.Value, '\\') {
				v.literal = false // $'...' escapes: not decoded here
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					v.literal = false
					continue
				}
				s := lit.Value
				for k := 0; k < len(s); k++ {
					// In double quotes a backslash quotes only $ ` " \
					// and newline; before anything else it stays.
					if s[k] == '\\' && k+1 < len(s) && strings.IndexByte("$`\"\\\n", s[k+1]) >= 0 {
						k++
						if s[k] != '\n' {
							b.WriteByte(s[k])
						}
						continue
					}
					b.WriteByte(s[k])
				}
			}
		default:
			v.literal = false
		}
	}
	v.text = b.String()
	return v
}

// hasBraces reports whether bash would brace-expand w ({a,b}, {1..3}).
func hasBraces(w *syntax.Word) bool {
	cp := &syntax.Word{Parts: make([]syntax.WordPart, len(w.Parts))}
	for i, part := range w.Parts {
		if lit, ok := part.(*syntax.Lit); ok {
			l := *lit
			part = &l
		}
		cp.Parts[i] = part
	}
	return syntax.SplitBraces(cp)
}
