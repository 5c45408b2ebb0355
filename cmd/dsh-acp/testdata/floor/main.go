// Command floor is the start-up floor of the benchmarks: the smallest
// agent written with the standard library alone. It reads one line from
// stdin (an ACP `initialize` request), answers it with a minimal
// InitializeResponse carrying the request's id, and then waits for stdin
// to end, as an idle agent does. It does nothing else; the benchmarks
// compare dsh-acp's spawn -> `initialize` time, RSS and exit time to it.
package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
)

func main() {
	r := bufio.NewReader(os.Stdin)
	line, err := r.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		os.Exit(1)
	}
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 {
		os.Exit(1)
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{
		"protocolVersion":   1,
		"agentCapabilities": map[string]any{},
		"authMethods":       []any{},
	}}
	out, _ := json.Marshal(resp)
	os.Stdout.Write(append(out, '\n'))
	io.Copy(io.Discard, r) // idle until stdin ends
}
