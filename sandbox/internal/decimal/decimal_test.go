package decimal

import (
	"strconv"
	"testing"
)

func TestItoa(t *testing.T) {
	for _, n := range []uint64{0, 7, 10, 65534, 1<<64 - 1} {
		if got, want := Itoa(n), strconv.FormatUint(n, 10); got != want {
			t.Errorf("Itoa(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestAtoi(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		okay bool
	}{
		{"0", 0, true}, {"42", 42, true}, {"999999999999999999", 999999999999999999, true},
		{"", 0, false}, {"-1", 0, false}, {"1x", 0, false}, {" 1", 0, false}, {"1000000000000000000", 0, false},
	} {
		n, ok := Atoi(c.in)
		if n != c.n || ok != c.okay {
			t.Errorf("Atoi(%q) = %d, %v; want %d, %v", c.in, n, ok, c.n, c.okay)
		}
		if nb, okb := Atoi([]byte(c.in)); nb != n || okb != ok {
			t.Errorf("Atoi([]byte(%q)) = %d, %v; want %d, %v", c.in, nb, okb, n, ok)
		}
	}
}
