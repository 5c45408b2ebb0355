package toolsearch

import (
	"bytes"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreNames are the ignore files read in every folder, in rising
// precedence: a rule of .ignore (ripgrep's file for rules git should not
// know) beats one of .gitignore in the same folder.
var ignoreNames = [...]string{".gitignore", ".ignore"}

// rule is one pattern line of an ignore file, as gitignore(5) reads it.
type rule struct {
	// glob is the pattern in doublestar syntax: relative to the folder
	// of the file, or a name pattern when nameOnly.
	glob string
	// literal: glob has no wildcard, so a string comparison decides.
	literal bool
	// negate: a "!" line, which re-includes what earlier lines excluded.
	negate bool
	// dirOnly: the line ended in "/"; it matches folders only.
	dirOnly bool
	// nameOnly: the line has no "/" but a trailing one, so it matches
	// the last path element at any depth below its folder.
	nameOnly bool
}

// parseIgnore reads the rules of one ignore file. It follows
// gitignore(5): blank lines and "#" comments are skipped; "\#" and "\!"
// start a pattern with a literal "#" or "!"; trailing spaces are dropped
// unless escaped ("\ "); "!" negates; a trailing "/" matches folders only;
// a "/" at the start or in the middle anchors the pattern to the file's
// folder, else it matches a name at any depth; "**" as a whole path
// element spans folders. A UTF-8 byte order mark and CR line ends are
// accepted. Braces are literal, as in git (doublestar would read them as
// alternatives). Lines that are not valid patterns (an unclosed "[") never
// match, as in git, and are dropped.
func parseIgnore(data []byte) []rule {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var rules []rule
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if r, ok := parseRule(string(bytes.TrimSuffix(line, []byte("\r")))); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

// parseRule reads one line (without its line end).
func parseRule(p string) (rule, bool) {
	if p == "" || p[0] == '#' {
		return rule{}, false
	}
	var r rule
	if p[0] == '!' {
		r.negate, p = true, p[1:]
	}
	// Trailing spaces go, unless the last one is escaped.
	for strings.HasSuffix(p, " ") && !strings.HasSuffix(p, "\\ ") {
		p = p[:len(p)-1]
	}
	if strings.HasSuffix(p, "/") {
		r.dirOnly, p = true, strings.TrimRight(p, "/")
	}
	if p == "" {
		return rule{}, false
	}
	r.nameOnly = !strings.Contains(p, "/")
	p = strings.TrimPrefix(p, "/")
	// "dir/**" matches what is inside dir, not dir itself (so
	// "!dir/keep" can still re-include a file in it).
	if strings.HasSuffix(p, "/**") {
		p += "/*"
	}
	// Braces are literal in git.
	p = strings.NewReplacer("{", `\{`, "}", `\}`).Replace(p)
	if !doublestar.ValidatePattern(p) {
		return rule{}, false
	}
	r.glob = p
	if !strings.ContainsAny(p, `*?[\`) {
		r.literal = true
	}
	return r, true
}

// match reports whether the rule matches target: the path relative to
// the rule's folder, or the name alone for a nameOnly rule.
func (r *rule) match(target string) bool {
	if r.literal {
		return r.glob == target
	}
	return doublestar.MatchUnvalidated(r.glob, target)
}

// ignoreSet is the rules of one folder's ignore files, chained to the
// sets of the folders above it. Sets are immutable once built, so the
// walkers share them freely.
type ignoreSet struct {
	parent *ignoreSet
	// base is the folder of the rules relative to the walk's top folder
	// ("" for the top itself), with "/" separators.
	base  string
	rules []rule
}

// child returns the set for folder base (relative to the top) with the
// rules of the given ignore files' contents, in rising precedence; s
// itself when they hold no rule.
func (s *ignoreSet) child(base string, files ...[]byte) *ignoreSet {
	var rules []rule
	for _, f := range files {
		rules = append(rules, parseIgnore(f)...)
	}
	if len(rules) == 0 {
		return s
	}
	return &ignoreSet{parent: s, base: base, rules: rules}
}

// ignored reports whether the path rel (relative to the top, "/"
// separators) is ignored: the deepest set with a matching rule decides,
// and in a set the last matching rule; a negated rule re-includes.
func (s *ignoreSet) ignored(rel string, isDir bool) bool {
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	for ; s != nil; s = s.parent {
		sub := rel
		if s.base != "" {
			if len(rel) <= len(s.base) || rel[len(s.base)] != '/' || !strings.HasPrefix(rel, s.base) {
				continue
			}
			sub = rel[len(s.base)+1:]
		}
		for i := len(s.rules) - 1; i >= 0; i-- {
			r := &s.rules[i]
			if r.dirOnly && !isDir {
				continue
			}
			target := sub
			if r.nameOnly {
				target = name
			}
			if r.match(target) {
				return !r.negate
			}
		}
	}
	return false
}
