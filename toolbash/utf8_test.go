package toolbash

import "testing"

func TestIncompleteSuffix(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 0}, {"é", 0}, {"a\xc3", 1}, {"a\xe2\x82", 2}, {"\xe2\x82\xac", 0},
		{"a\xf0\x9f\x98", 3}, {"\xf0\x9f\x98\x80", 0}, {"a\xff", 0}, {"a\x80", 0}, {"a\xc3\x28", 0},
		{"\x80\x80\x80", 0},
	} {
		if got := incompleteSuffix([]byte(c.in)); got != c.want {
			t.Errorf("incompleteSuffix(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestRuneStartSkipAndCutBack(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"abc", 0}, {"\xa9abc", 1}, {"\x82\xacx", 2}, {"\x9f\x98\x80x", 3}, {"\x80\x80\x80\x80x", 0},
	} {
		if got := runeStartSkip([]byte(c.in)); got != c.want {
			t.Errorf("runeStartSkip(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	b := []byte("ab€cd") // € is 3 bytes at 2..4
	for n, want := range map[int]int{0: 0, 1: 1, 2: 2, 3: 2, 4: 2, 5: 5, 9: 7} {
		if got := cutBack(b, n); got != want {
			t.Errorf("cutBack(%q, %d) = %d, want %d", b, n, got, want)
		}
	}
}
