package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// peakRSS is a process's peak resident set (VmHWM), in MiB.
func peakRSS(b *testing.B, pid int) float64 {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		var kb float64
		if _, err := fmt.Sscanf(l, "VmHWM: %f kB", &kb); err == nil {
			return kb / 1024
		}
	}
	b.Fatal("no VmHWM")
	return 0
}

// memProc starts the binary with its stdin and stdout as pipes.
func memProc(b *testing.B, args ...string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	b.Helper()
	cmd := exec.Command(binary(b), args...)
	cmd.Env = append(os.Environ(), "DSH_STATE_DIR="+b.TempDir(), "DSH_API_KEY=", "DEEPSEEK_API_KEY=")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, stdin, bufio.NewReader(stdout)
}

// writePrompt writes a session/prompt request whose text is n bytes.
func writePrompt(w io.Writer, id, n int) error {
	if _, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"sess_none","prompt":[{"type":"text","text":"`, id); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	_, err := io.WriteString(w, "\"}]}}\n")
	return err
}

// BenchmarkMemoryHostileMessage: a 256 MiB message against the default
// 64 MiB limit is refused (-32600) without being held: peak RSS in MiB.
// Then an accepted 60 MiB message (decoded in full, answered -32002):
// peak RSS and its ratio to the message.
func BenchmarkMemoryHostileMessage(b *testing.B) {
	for range b.N {
		cmd, stdin, out := memProc(b)
		go writePrompt(stdin, 1, 256<<20)
		line, err := out.ReadString('\n')
		if err != nil || !strings.Contains(line, `"id":1`) || !strings.Contains(line, "-32600") {
			b.Fatalf("answer to the hostile message: %.200s %v", line, err)
		}
		b.ReportMetric(peakRSS(b, cmd.Process.Pid), "hostile-256MiB-peak-RSS-MiB")
		const accepted = 60 << 20
		go writePrompt(stdin, 2, accepted)
		line, err = out.ReadString('\n')
		if err != nil || !strings.Contains(line, `"id":2`) || !strings.Contains(line, "-32002") {
			b.Fatalf("answer to the 60 MiB message: %.200s %v", line, err)
		}
		peak := peakRSS(b, cmd.Process.Pid)
		b.ReportMetric(peak, "accepted-60MiB-peak-RSS-MiB")
		b.ReportMetric(peak/(accepted>>20), "peak-RSS/message")
		stdin.Close()
	}
}

// BenchmarkMemoryNonReadingClient: a client that sends requests as fast
// as it can and never reads stdout. Reading pauses once the answers back
// up: the requests the agent took in, and its peak RSS in MiB, stay
// bounded (the client's writes block).
func BenchmarkMemoryNonReadingClient(b *testing.B) {
	for range b.N {
		cmd, stdin, _ := memProc(b)
		line := []byte(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}` + "\n")
		var sent atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < 2_000_000; i++ {
				if _, err := stdin.Write(line); err != nil {
					return
				}
				sent.Add(1)
			}
		}()
		// Let it run until the client is stuck (or sent everything).
		deadline := time.Now().Add(20 * time.Second)
		last := int64(-1)
		for time.Now().Before(deadline) {
			time.Sleep(500 * time.Millisecond)
			if sent.Load() == last {
				break
			}
			last = sent.Load()
		}
		select {
		case <-done:
			b.Fatalf("all %d requests were taken in from a client that reads nothing", sent.Load())
		default:
		}
		b.ReportMetric(float64(sent.Load()), "requests-written-before-pause")
		b.ReportMetric(peakRSS(b, cmd.Process.Pid), "peak-RSS-MiB")
		_ = cmd.Process.Kill()
	}
}
