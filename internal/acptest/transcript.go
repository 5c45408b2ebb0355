package acptest

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Line is one message of a transcript, as written.
type Line struct {
	FromClient bool
	Raw        []byte
}

// Transcript records both directions of a JSON-RPC conversation. Wrap the
// streams with ClientWriter and AgentWriter. Safe for concurrent use.
type Transcript struct {
	mu      sync.Mutex
	lines   []Line
	methods map[string]string // client request id -> method
	partial [2][]byte
}

// NewTranscript returns an empty transcript.
func NewTranscript() *Transcript {
	return &Transcript{methods: map[string]string{}}
}

type tap struct {
	tr     *Transcript
	client bool
	next   interface{ Write([]byte) (int, error) }
}

func (w tap) Write(p []byte) (int, error) {
	w.tr.add(w.client, p)
	if w.next == nil {
		return len(p), nil
	}
	return w.next.Write(p)
}

// ClientWriter returns a writer that records what the client sends and
// passes it to next (nil: discard).
func (t *Transcript) ClientWriter(next interface{ Write([]byte) (int, error) }) interface{ Write([]byte) (int, error) } {
	return tap{t, true, next}
}

// AgentWriter returns a writer that records what the agent writes and
// passes it to next (nil: discard).
func (t *Transcript) AgentWriter(next interface{ Write([]byte) (int, error) }) interface{ Write([]byte) (int, error) } {
	return tap{t, false, next}
}

func (t *Transcript) add(client bool, p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := 0
	if client {
		i = 1
	}
	buf := append(t.partial[i], p...)
	for {
		n := bytes.IndexByte(buf, '\n')
		if n < 0 {
			break
		}
		line := bytes.TrimSpace(buf[:n])
		buf = buf[n+1:]
		if len(line) == 0 {
			continue
		}
		cp := append([]byte(nil), line...)
		t.lines = append(t.lines, Line{FromClient: client, Raw: cp})
		if client {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(cp, &m) == nil && m.Method != "" && len(m.ID) > 0 {
				t.methods[string(m.ID)] = m.Method
			}
		}
	}
	t.partial[i] = append([]byte(nil), buf...)
}

// Lines returns the recorded lines in order.
func (t *Transcript) Lines() []Line {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Line(nil), t.lines...)
}

// AgentLines returns only what the agent wrote.
func (t *Transcript) AgentLines() [][]byte {
	var out [][]byte
	for _, l := range t.Lines() {
		if !l.FromClient {
			out = append(out, l.Raw)
		}
	}
	return out
}

// MethodOf returns the method of the client request an agent response
// answers ("" when line is not such a response).
func (t *Transcript) MethodOf(line []byte) string {
	id := idOf(line)
	if id == "" || id == "null" {
		return ""
	}
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(line, &m) == nil && m.Method != "" {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.methods[id]
}
