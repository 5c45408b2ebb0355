package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// BenchmarkToolTurnHistory resumes a session of 1,000 tool calls (a
// history of about 2 MB) and runs one prompt whose turn makes 50 tool
// calls (a read of a missing file each, so the tool's own time is
// small) and then answers, against a model server on 127.0.0.1 that
// reads each request and answers at once; dsh-acp and the other builds
// (DSH_BENCH_AGENTS) in turn. It reports medians of the turn's time
// (turn-ms), the time per step (step-ms: the turn's over its 51
// requests) and the last request's size (request-MB), NAME-... for the
// other builds.
func BenchmarkToolTurnHistory(b *testing.B) {
	const calls = 50
	root, id, cwd := historyStateDir(b, 1000)
	var step atomic.Int64
	var reqBytes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		reqBytes.Store(n)
		w.Header().Set("Content-Type", "text/event-stream")
		k := int(step.Add(1)) - 1
		if k < calls {
			io.WriteString(w, e2etest.ToolCallsAt(k, [2]string{"read", fmt.Sprintf(`{"path":"missing/file%d.go"}`, k)}))
			return
		}
		io.WriteString(w, e2etest.Text(nil, []string{"Done."}, "stop"))
	}))
	defer srv.Close()
	agents := benchAgents(b)
	res := map[string][]float64{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range agents {
			a := agents[(i+k)%len(agents)]
			p := resumeProc(b, a, srv.URL, root, id, cwd)
			step.Store(0)
			t0 := time.Now()
			p.send(b, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+id+`","prompt":[{"type":"text","text":"read them"}]}}`)
			for _, l := range p.answer(b, 3) {
				if bytes.Contains(l, []byte(`"id":3,"error"`)) {
					b.Fatalf("%s: %s", a.name, l)
				}
			}
			took := ms(time.Since(t0))
			if n := step.Load(); n != calls+1 {
				b.Fatalf("%s: %d model requests, want %d", a.name, n, calls+1)
			}
			p.stdin.Close()
			for range p.lines {
			}
			p.wait(b)
			res[a.name] = append(res[a.name], took)
		}
	}
	b.ReportMetric(float64(reqBytes.Load())/1e6, "request-MB")
	for _, a := range agents {
		prefix := ""
		if a.name != "dsh-acp" {
			prefix = a.name + "-"
		}
		b.ReportMetric(median(res[a.name]), prefix+"turn-ms")
		b.ReportMetric(median(res[a.name])/(calls+1), prefix+"step-ms")
	}
}
