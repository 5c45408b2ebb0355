// Package decimal reads and writes non-negative decimal integers, for the
// sandbox helper and the packages it imports instead of strconv: Go
// initializes packages in import path order, each after its imports, and
// the helper (whose init becomes the helper process) runs only after every
// package it depends on. strconv's path sorts late, and waiting for it let
// about sixty other packages of the binary initialize first (about 0.8 ms
// of CPU per sandboxed command). This package imports nothing.
package decimal

// Itoa is the decimal form of n.
func Itoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// Atoi parses s as a non-negative decimal integer of at most 18 digits
// (which fits a 64-bit int); ok is false when s is empty, holds anything
// but digits or is longer.
func Atoi[T ~string | ~[]byte](s T) (n int, ok bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
