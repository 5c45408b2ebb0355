// Command exhaustive runs the exhaustive analyzer (package
// internal/exhaustive): `go tool exhaustive ./...`, or as a vet tool,
// `go vet -vettool=$(go tool -n exhaustive) ./...`. It exits non-zero
// when a switch over a closed set misses members without a documented
// default.
package main

import (
	"github.com/dsh-acp/dsh-acp/internal/exhaustive"
	"golang.org/x/tools/go/analysis/singlechecker"
)

func main() { singlechecker.Main(exhaustive.Analyzer) }
