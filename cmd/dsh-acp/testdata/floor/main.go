// Command floor is the start-up floor of the benchmarks: the smallest
// agent written with the standard library alone. It answers an ACP
// `initialize` request with a minimal InitializeResponse and a
// `session/new` with a fixed session id (each carrying the request's id),
// ignores other lines, and exits when stdin ends, as an idle agent does.
// It does nothing else; the benchmarks compare dsh-acp's spawn ->
// `initialize` and spawn -> `session/new` times, RSS and exit time to it.
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

func main() {
	r := bufio.NewReader(os.Stdin)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			answer(line)
		}
		if err != nil {
			return
		}
	}
}

// answer answers one request line, if it is one of the two.
func answer(line []byte) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &req) != nil || len(req.ID) == 0 {
		return
	}
	var result any
	switch req.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{}, "authMethods": []any{}}
	case "session/new":
		result = map[string]any{"sessionId": "floor-1"}
	default:
		return
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	os.Stdout.Write(append(out, '\n'))
}
