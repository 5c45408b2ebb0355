package tools

import "testing"

func TestMarkdownInline(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"TODO", "TODO"},
		{"src/main.go", "src/main.go"},
		{"fix: the bug, now", "fix: the bug, now"},
		{"déjà vu", "déjà vu"},
		{"my_pkg", "`my_pkg`"},
		{"*.go", "`*.go`"},
		{`func \w+\(`, "`func \\w+\\(`"},
		{"a`b", "``a`b``"},
		{"``x", "``` ``x ```"},
		{"x`", "`` x` ``"},
		{" lead", "`  lead `"},
		{"trail ", "` trail  `"},
		{"", "` `"},
		{"a\nb", "`a\\nb`"},
		{"tab\there", "`tab\\there`"},
		{"<b>", "`<b>`"},
		{"[link](x)", "`[link](x)`"},
		{"a|b", "`a|b`"},
		{"&amp;", "`&amp;`"},
		{"~x~", "`~x~`"},
		{"#1", "`#1`"},
	} {
		if got := MarkdownInline(c.in); got != c.want {
			t.Errorf("MarkdownInline(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
