// Package layering holds no code of the program: its test checks the
// import rules of the repository's layering (which of our packages each
// package may import, and which outside modules the low layers may use),
// reading every non-test Go file's imports with go/parser, and that the
// README's package table names every package. The rules live in
// layering_test.go, one row a package with what it may import.
// paths_test.go checks a rule of the tool packages' source: none joins,
// cleans or makes absolute a path itself (every path argument is
// resolved by the permission package), outside a short list of places
// that handle no argument.
package layering
