package main

import (
	"fmt"
	"io"
)

// runDiff runs `dsh-acp diff OLD NEW`.
func runDiff(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "dsh-acp diff: not built yet")
	return 2
}
