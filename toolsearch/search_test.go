package toolsearch

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// engineOutput runs an engine over data and renders its lines like
// `grep -n -C k`.
func engineOutput(t *testing.T, pattern, mode string, context, chunk int, data []byte) (string, fileResult) {
	t.Helper()
	re := regexp.MustCompile("(?m)" + pattern)
	e := &engine{re: re, mode: mode, context: context, keep: 1 << 30, chunk: chunk}
	if _, complete := re.LiteralPrefix(); !complete {
		e.pf = newPrefilter("(?m)" + pattern)
	}
	res, err := e.search(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range res.lines {
		switch {
		case l.n == 0:
			b.WriteString("--\n")
		case l.match:
			b.WriteString(strconv.Itoa(l.n) + ":" + string(l.text) + "\n")
		default:
			b.WriteString(strconv.Itoa(l.n) + "-" + string(l.text) + "\n")
		}
	}
	return b.String(), res
}

// randomText makes lines of a, b, c and spaces, some empty, with or
// without a final line end.
func randomText(rng *rand.Rand, lines int, longLine bool) []byte {
	var b bytes.Buffer
	for i := 0; i < lines; i++ {
		n := rng.IntN(12)
		if longLine && i == lines/2 {
			n = 300
		}
		for j := 0; j < n; j++ {
			b.WriteByte("abc  "[rng.IntN(5)])
		}
		if i < lines-1 || rng.IntN(2) == 0 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// TestEngineMatchesGNUGrep: content, count and files output on random
// texts equal GNU grep's (-n -C, -c, -l), for patterns whose meaning is
// the same in RE2 and POSIX ERE, whatever the read size (a text read in
// pieces of 16 bytes, lines longer than a piece, context across pieces).
func TestEngineMatchesGNUGrep(t *testing.T) {
	grepBin, err := exec.LookPath("grep")
	if err != nil {
		t.Skip("GNU grep not installed")
	}
	if out, _ := exec.Command(grepBin, "--version").Output(); !bytes.Contains(out, []byte("GNU")) {
		t.Skip("grep is not GNU grep")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 9))
	patterns := []string{"ab", "a+b", "^b", "c$", "b.c", "(ab|ca)", "^$", "x*", "c c", "^a.*a$", "[bc]{3}"}
	for round := 0; round < 24; round++ {
		data := randomText(rng, 1+rng.IntN(60), round%5 == 4)
		path := filepath.Join(dir, "f"+strconv.Itoa(round))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range patterns {
			for _, k := range []int{0, 1, 3} {
				// Without -C (k 0): grep prints "--" for -C 0.
				args := []string{"-n", "-E", p, path}
				if k > 0 {
					args = append(args, "-C", strconv.Itoa(k))
				}
				want, _ := exec.Command(grepBin, args...).Output()
				for _, chunk := range []int{16, 37, 4096} {
					got, _ := engineOutput(t, p, modeContent, k, chunk, data)
					if got != string(want) {
						t.Fatalf("pattern %q context %d chunk %d on %q:\ngot\n%s\nwant\n%s", p, k, chunk, data, got, want)
					}
				}
			}
			want, _ := exec.Command(grepBin, "-c", "-E", p, path).Output()
			_, res := engineOutput(t, p, modeCount, 0, 16, data)
			if strconv.Itoa(res.count)+"\n" != string(want) {
				t.Fatalf("count of %q on %q = %d, grep -c says %s", p, data, res.count, want)
			}
			err := exec.Command(grepBin, "-q", "-E", p, path).Run()
			_, res = engineOutput(t, p, modeFiles, 0, 37, data)
			if (err == nil) != (res.count == 1) {
				t.Fatalf("files mode of %q on %q: found %v, grep -q: %v", p, data, res.count == 1, err)
			}
		}
	}
}

// TestEngineDetails: CR line ends are not shown, a NUL anywhere makes the
// file binary, matches never span lines, the first match line is known
// in every mode, and keep bounds the lines held.
func TestEngineDetails(t *testing.T) {
	out, _ := engineOutput(t, "b$", modeContent, 0, 0, []byte("ab\r\ncb\n"))
	if out != "2:cb\n" {
		t.Errorf("CRLF: %q (b$ does not match before a CR, as in grep; CR never shown)", out)
	}
	out, _ = engineOutput(t, "a", modeContent, 0, 0, []byte("xa\r\n"))
	if out != "1:xa\n" {
		t.Errorf("CR shown: %q", out)
	}
	for _, chunk := range []int{16, 0} {
		_, res := engineOutput(t, "a", modeContent, 0, chunk, []byte("a\n"+strings.Repeat("x", 40)+"\x00\n"))
		if !res.binary || len(res.lines) != 0 {
			t.Errorf("chunk %d: NUL not seen as binary: %+v", chunk, res)
		}
	}
	out, _ = engineOutput(t, `a\s+b`, modeContent, 0, 0, []byte("a\nb\na  b\n"))
	if out != "3:a  b\n" {
		t.Errorf("a match across lines: %q", out)
	}
	for _, mode := range []string{modeFiles, modeCount, modeContent} {
		for _, chunk := range []int{16, 0} {
			_, res := engineOutput(t, "needle", mode, 0, chunk, []byte(strings.Repeat("hay\n", 30)+"a needle\nneedle\n"))
			if res.first != 31 {
				t.Errorf("%s chunk %d: first match line %d, want 31", mode, chunk, res.first)
			}
		}
	}
	e := &engine{re: regexp.MustCompile("(?m)x"), mode: modeContent, keep: 3}
	res, _ := e.search(strings.NewReader(strings.Repeat("x\n", 10)))
	if len(res.lines) != 3 || !res.more {
		t.Errorf("keep 3: %d lines, more %v", len(res.lines), res.more)
	}
}

// TestPrefilter: the literal each pattern requires, and that the
// prefiltered search finds what the full pattern finds, folding case
// included (but never "k"/"s", whose case variants are not ASCII).
func TestPrefilter(t *testing.T) {
	for _, c := range []struct{ pattern, want string }{
		{`^\s*// TODO`, "// TODO"},
		{`func \w+\(`, "func "},
		{`(?i)needle`, "NEEDLE(fold)"},
		{`(?i)mask`, "MA(fold)"},
		{`(?i)ks`, ""},
		{`foo|bar`, "foo bar"},
		{`foo|\w+`, ""},
		{`(ab)+c*`, "ab"},
		{`x*`, ""},
		{`\d{4}-\d{2}`, "-"},
	} {
		pf := newPrefilter("(?m)" + c.pattern)
		var got []string
		if pf != nil {
			for _, n := range pf.needles {
				s := string(n.lit)
				if n.fold {
					s += "(fold)"
				}
				got = append(got, s)
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("prefilter of %q = %q, want %q", c.pattern, got, c.want)
		}
	}
	text := []byte("Needle\nneedLE x\nno\nMASK\nmaSk\nthe KELVIN \u212a mask\nfoo bar\n")
	for _, p := range []string{`(?i)needle`, `(?i)mask`, `(?i)kelvin`, `(?i)k mask`, `foo|ba[rz]`, `(?i)NEEDLE|mask`} {
		for _, chunk := range []int{0, 16} {
			got, _ := engineOutput(t, p, modeContent, 0, chunk, text)
			var want strings.Builder
			re := regexp.MustCompile(p)
			for i, l := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
				if re.MatchString(l) {
					want.WriteString(strconv.Itoa(i+1) + ":" + l + "\n")
				}
			}
			if got != want.String() {
				t.Errorf("%q chunk %d:\n%s\nwant\n%s", p, chunk, got, want.String())
			}
		}
	}
}
