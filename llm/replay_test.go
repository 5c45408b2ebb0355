package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// TestReplayFixture: a replay serves a recorded folder's NNN.sse in order,
// each parsed as ParseStream parses it, then answers CodeReplayExhausted
// naming the missing file.
func TestReplayFixture(t *testing.T) {
	forEachSource(t, func(t *testing.T, root string) {
		dir := filepath.Join(root, "tool-call-turn")
		rp := NewReplay(dir)
		for _, nnn := range []string{"001", "002"} {
			var deltas []Delta
			res, err := rp.Stream(context.Background(), Request{}, func(d Delta) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatalf("%s: %v", nnn, err)
			}
			want := parse(bytes.NewReader(readFile(t, filepath.Join(dir, nnn+".sse"))))
			sameResult(t, "replay "+nnn, result{Deltas: deltas, Resp: res}, want)
		}
		_, err := rp.Stream(context.Background(), Request{}, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeReplayExhausted {
			t.Fatalf("third request: %v", err)
		}
		if want := filepath.Join(dir, "003.sse"); !strings.Contains(e.Error(), want) || !strings.Contains(e.Error(), "request 3") {
			t.Fatalf("message %q does not name %s", e.Error(), want)
		}
		if rp.Requests() != 3 {
			t.Fatalf("Requests() = %d", rp.Requests())
		}
	})
}

func TestReplayConcurrent(t *testing.T) {
	dir := t.TempDir()
	const n = 20
	for i := 1; i <= n; i++ {
		body := fmt.Sprintf(`data: {"choices":[{"index":0,"delta":{"content":"%d"}}]}`+"\n\ndata: [DONE]\n\n", i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d.sse", i)), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rp := &Replay{Dir: dir}
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range n + 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := rp.Stream(context.Background(), Request{}, nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				seen[errCode(err)] = true
				return
			}
			if seen[res.Text] {
				t.Errorf("file %s served twice", res.Text)
			}
			seen[res.Text] = true
		}()
	}
	wg.Wait()
	want := map[string]bool{CodeReplayExhausted: true}
	for i := 1; i <= n; i++ {
		want[fmt.Sprint(i)] = true
	}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("served %v", seen)
	}
}

func TestReplayEmptyAndCutFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "001.sse"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, "002.sse"), []byte(`data: {"choices":[{"index":0,"delta":{"content":"par`), 0o600)
	os.Mkdir(filepath.Join(dir, "003.sse"), 0o700) // unreadable as a file
	rp := NewReplay(dir)
	for _, want := range []string{CodeEmptyResponse, CodeStreamClosed, CodeReplayRead} {
		if _, err := rp.Stream(context.Background(), Request{}, nil); errCode(err) != want {
			t.Fatalf("got %v, want %s", err, want)
		}
	}
}

func TestReplayCancelled(t *testing.T) {
	forEachSource(t, func(t *testing.T, root string) {
		ctx, cancel := context.WithCancel(context.Background())
		rp := NewReplay(filepath.Join(root, "text-turn"))
		calls := 0
		_, err := rp.Stream(ctx, Request{}, func(Delta) {
			calls++
			cancel()
		})
		if !errors.Is(err, context.Canceled) || errCode(err) != CodeCancelled {
			t.Fatalf("err %v", err)
		}
		if calls == 0 {
			t.Fatal("no delta before the cancel")
		}
	})
}
