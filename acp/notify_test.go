package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// envelope is a notification as a plain struct, encoded by json.Marshal:
// the reference for Conn.Notify's lines.
type envelope struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// TestNotifyDirectPath: a session/update sent through Conn.Notify (value
// or pointer) or Conn.SessionUpdate is the line json.Marshal writes for
// it, and an update that cannot be encoded is an error that writes
// nothing.
func TestNotifyDirectPath(t *testing.T) {
	var out bytes.Buffer
	s := newLineStream(strings.NewReader(""), &out, nil, Limits{})
	c := &Conn{stream: s}
	g := &gen{r: rand.New(rand.NewPCG(5, 6))}
	for i := range 300 {
		n := SessionNotification{SessionID: "s<1>", Update: g.update(false)}
		if i%5 == 0 {
			n.Meta = json.RawMessage(` {"a": "<b>"} `)
		}
		want, err := json.Marshal(envelope{"2.0", MethodSessionUpdate, n})
		if err != nil {
			t.Fatal(err)
		}
		out.Reset()
		switch i % 3 {
		case 0:
			err = c.Notify(MethodSessionUpdate, n)
		case 1:
			err = c.Notify(MethodSessionUpdate, &n)
		default:
			err = c.SessionUpdate(t.Context(), n)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != string(want)+"\n" {
			t.Fatalf("Notify wrote\n%s\nwant\n%s", got, want)
		}
	}
	out.Reset()
	bad := SessionNotification{SessionID: "s", Update: ToolCallUpdate{ToolCallID: "c", RawInput: json.RawMessage("{")}}
	if err := c.Notify(MethodSessionUpdate, bad); err == nil || out.Len() != 0 {
		t.Errorf("an invalid update: err %v, wrote %q", err, out.String())
	}
	if err := c.Notify(MethodSessionUpdate, SessionNotification{SessionID: "s"}); err == nil || out.Len() != 0 {
		t.Errorf("a nil update: err %v, wrote %q", err, out.String())
	}
	// The next message after a failed one is whole.
	if err := c.Notify("other", map[string]string{"k": "<v>"}); err != nil || out.String() != `{"jsonrpc":"2.0","method":"other","params":{"k":"\u003cv\u003e"}}`+"\n" {
		t.Errorf("after a failure: %v %q", err, out.String())
	}
}

// TestNotifyLinesDoNotInterleave: direct-path and generic notifications
// sent from several goroutines arrive as whole lines, each writer's in
// its own order.
func TestNotifyLinesDoNotInterleave(t *testing.T) {
	r, w := io.Pipe()
	s := newLineStream(strings.NewReader(""), w, nil, Limits{})
	c := &Conn{stream: s}
	const writers, each = 4, 200
	var wg sync.WaitGroup
	for k := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := strings.Repeat("x", 3000)
			for i := range each {
				var err error
				if i%2 == 0 {
					err = c.Notify(MethodSessionUpdate, SessionNotification{SessionID: string(rune('a' + k)), Update: AgentMessageChunk{
						MessageID: itoa(i), Content: TextBlock(text)}})
				} else {
					err = c.Notify("other", map[string]any{"k": k, "i": i, "text": text})
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); w.Close() }()
	next := make([]int, writers)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			Method string
			Params json.RawMessage
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line is not one message: %v\n%.200s", err, sc.Bytes())
		}
		var k, i int
		if m.Method == MethodSessionUpdate {
			var n SessionNotification
			if err := json.Unmarshal(m.Params, &n); err != nil {
				t.Fatal(err)
			}
			k = int(n.SessionID[0] - 'a')
			if err := json.Unmarshal([]byte(n.Update.(AgentMessageChunk).MessageID), &i); err != nil {
				t.Fatal(err)
			}
		} else {
			var p struct{ K, I int }
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			k, i = p.K, p.I
		}
		if i != next[k] {
			t.Fatalf("writer %d: message %d arrived, want %d", k, i, next[k])
		}
		next[k]++
	}
	for k, n := range next {
		if n != each {
			t.Errorf("writer %d: %d messages arrived, want %d", k, n, each)
		}
	}
}

// TestEncodeString: the short path for plain strings writes what
// json.Marshal writes, for every single byte and the tricky strings.
func TestEncodeString(t *testing.T) {
	in := append([]string{"session/update", "sess_0123456789abcdef", "a b~"}, trickyStrings...)
	for c := range 256 {
		in = append(in, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, s := range in {
		b.Reset()
		if err := encodeString(&b, enc, s); err != nil {
			t.Fatal(err)
		}
		if want, _ := json.Marshal(s); b.String() != string(want) {
			t.Errorf("encodeString(%q) = %s, want %s", s, b.String(), want)
		}
	}
}
