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

// TestNotifyDirectPath: a session/update sent through Conn.Notify (value
// or pointer) is the line the generic encoder wrote for it before, and an
// update that cannot be encoded is an error that writes nothing.
func TestNotifyDirectPath(t *testing.T) {
	var out bytes.Buffer
	s := newLineStream(strings.NewReader(""), &out, nil)
	c := &Conn{stream: s}
	g := &gen{r: rand.New(rand.NewPCG(5, 6))}
	sent := 0
	for i := range 300 {
		u := g.update()
		ref := refSessionNotification{"s<1>", refUpdate(u)}
		want, wantErr := encodeLine(notification{JSONRPC: "2.0", Method: "session/update", Params: ref}, false)
		out.Reset()
		var err error
		if i%2 == 0 {
			err = c.Notify("session/update", SessionNotification{"s<1>", u})
		} else {
			err = c.Notify("session/update", &SessionNotification{"s<1>", u})
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("Notify error = %v, reference %v", err, wantErr)
		}
		if err != nil {
			if out.Len() != 0 {
				t.Fatalf("a failed Notify wrote %q", out.String())
			}
			continue
		}
		sent++
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("Notify wrote\n%s\nwant\n%s", out.Bytes(), want)
		}
	}
	if sent < 100 {
		t.Errorf("only %d of 300 updates were sent", sent)
	}
}

// TestNotifyLinesDoNotInterleave: direct-path and generic notifications
// sent from several goroutines arrive as whole lines, each writer's in
// its own order.
func TestNotifyLinesDoNotInterleave(t *testing.T) {
	r, w := io.Pipe()
	s := newLineStream(strings.NewReader(""), w, nil)
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
					b := TextBlock(text)
					err = c.Notify("session/update", SessionNotification{SessionID: "s", Update: SessionUpdate{
						SessionUpdate: UpdateAgentMessageChunk, ToolCallID: string(rune('a' + k)), UpdatedAt: itoa(i), Content: &b}})
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
			Params struct {
				K, I   int
				Update SessionUpdate
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line is not one message: %v\n%.200s", err, sc.Bytes())
		}
		k, i := m.Params.K, m.Params.I
		if m.Method == "session/update" {
			k = int(m.Params.Update.ToolCallID[0] - 'a')
			if err := json.Unmarshal([]byte(m.Params.Update.UpdatedAt), &i); err != nil {
				t.Fatal(err)
			}
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
