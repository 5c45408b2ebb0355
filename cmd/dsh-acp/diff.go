package main

import (
	"io"

	"github.com/dsh-acp/dsh-acp/internal/diffcmd"
)

// runDiff runs `dsh-acp diff OLD NEW` (see diffcmd): exit 0 without
// hunks, 1 with hunks, 2 on error.
func runDiff(args []string, stdout, stderr io.Writer) int {
	return diffcmd.Run(args, stdout, stderr)
}
