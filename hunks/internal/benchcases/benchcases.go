// Package benchcases generates the deterministic before/after inputs used to
// benchmark hunks and `dsh-acp diff` against GNU diff:
// code-like lines, about 25% boilerplate (closing braces, blank lines,
// `return nil`, …) and the rest unique. The same name always gives the same
// bytes.
package benchcases

import (
	"bytes"
	"fmt"
	"math/rand/v2"
)

// Case is one benchmark input pair.
type Case struct {
	Name          string // short name, usable as a file name
	Title         string // what the case is, for reports
	Before, After []byte
}

// Names lists the cases in report order.
var Names = []string{"10k-1", "100k-1", "100k-1000", "1MB-line", "20k-rewrite"}

// Get returns the case called name, or false when there is none.
func Get(name string) (Case, bool) {
	switch name {
	case "10k-1":
		a := Code(1, 10_000)
		return Case{name, "10k lines, 1 change", Join(a), Join(changeOne(a))}, true
	case "100k-1":
		a := Code(2, 100_000)
		return Case{name, "100k lines, 1 change", Join(a), Join(changeOne(a))}, true
	case "100k-1000":
		a := Code(3, 100_000)
		return Case{name, "100k lines, 1,000 scattered changes", Join(a), Join(Scatter(a, 1000, 7))}, true
	case "1MB-line":
		a, b := minified()
		return Case{name, "1 MB single line, 1 change", a, b}, true
	case "20k-rewrite":
		return Case{name, "20k lines fully rewritten", Join(Code(5, 20_000)), Join(Code(6, 20_000))}, true
	}
	return Case{}, false
}

// All returns every case, in the order of Names.
func All() []Case {
	out := make([]Case, 0, len(Names))
	for _, n := range Names {
		c, _ := Get(n)
		out = append(out, c)
	}
	return out
}

var boilerplate = []string{
	"}", "", "\t}", "\treturn nil", "\t\treturn err", "\tif err != nil {", "\t\t}", "\treturn nil, err",
}

// Code returns n code-like lines (without "\n"); seed picks the unique
// lines, so two seeds share only boilerplate.
func Code(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 99))
	names := []string{"parse", "load", "store", "render", "apply", "check", "merge", "split"}
	out := make([]string, n)
	for i := range out {
		if r.IntN(4) == 0 {
			out[i] = boilerplate[r.IntN(len(boilerplate))]
			continue
		}
		out[i] = fmt.Sprintf("\tv%d := %s(ctx, %d, %q)", r.Uint32()%1_000_000, names[r.IntN(len(names))], r.IntN(1000), fmt.Sprintf("k%x", r.Uint64()%1_000_000_007))
	}
	return out
}

// Join returns lines as a text, each line ending in "\n".
func Join(lines []string) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// changeOne returns a copy of a with its middle line modified.
func changeOne(a []string) []string {
	b := append([]string(nil), a...)
	b[len(b)/2] += " // edited"
	return b
}

// Scatter returns a copy of a with n edits (n <= len(a)) spread evenly: 70%
// modify a line, 15% insert a new one, 15% delete one; seed picks which.
func Scatter(a []string, n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 7))
	step := len(a) / n
	b := make([]string, 0, len(a)+n)
	for i, l := range a {
		if i%step != step/2 {
			b = append(b, l)
			continue
		}
		switch p := r.IntN(100); {
		case p < 70:
			b = append(b, l+fmt.Sprintf(" // edit %d", i))
		case p < 85:
			b = append(b, l, fmt.Sprintf("\tinserted(%d)", i))
		}
	}
	return b
}

// minified returns a 1 MB single line of minified script without a final
// newline, and a copy with 5 bytes changed in the middle.
func minified() (before, after []byte) {
	var b bytes.Buffer
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "function f%d(a,b){return a*%d+b};", i, i%97)
	}
	before = b.Bytes()[:1<<20]
	after = append([]byte(nil), before...)
	copy(after[len(after)/2:], "ZZZZZ")
	return before, after
}
