package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/e2etest"
)

// editTurnCalls is how many files BenchmarkEditTurn50 reads and edits.
const editTurnCalls = 50

// BenchmarkEditTurn50 runs one prompt turn through the binary in which
// the model reads 50 files (2,000 lines each) in one response and edits
// each of them in the next (permission previews included: the edits run
// under bypassPermissions, whose calls still show their preview first),
// and reports the medians of the wall time of the whole `session/prompt`
// (turn-ms), of the edit step alone (edit-ms: from the step's first edit
// card to the prompt's answer) and of the agent process's CPU time, user
// and system, start and exit included (cpu-ms: the figure that holds on
// a busy machine).
func BenchmarkEditTurn50(b *testing.B) {
	var turn, edits, cpu []float64
	for range b.N {
		t, e, c := editTurnRun(b)
		turn, edits, cpu = append(turn, ms(t)), append(edits, ms(e)), append(cpu, ms(c))
	}
	b.ReportMetric(median(turn), "turn-ms")
	b.ReportMetric(median(edits), "edit-ms")
	b.ReportMetric(median(cpu), "cpu-ms")
}

// editTurnRun is one turn of BenchmarkEditTurn50 in a fresh folder: the
// time of the whole prompt and of its edit step, and the agent's CPU
// time.
func editTurnRun(b *testing.B) (turn, edit, cpu time.Duration) {
	b.Helper()
	dir := b.TempDir()
	var reads, edits [][2]string
	for i := range editTurnCalls {
		name := fmt.Sprintf("file%02d.go", i)
		var text strings.Builder
		for l := range 2000 {
			fmt.Fprintf(&text, "\tx%d := compute(%d) // line %d of a file the model edits\n", l, l, l)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		ra, _ := json.Marshal(map[string]any{"file_path": name})
		ea, _ := json.Marshal(map[string]any{"file_path": name, "old_string": "x1000 := compute(1000)", "new_string": "x1000 := computed(1000)"})
		reads, edits = append(reads, [2]string{"read", string(ra)}), append(edits, [2]string{"edit", string(ea)})
	}
	// The files' times lie in the past, as those of files a model edits
	// mostly do.
	old := time.Now().Add(-time.Hour)
	for i := range editTurnCalls {
		_ = os.Chtimes(filepath.Join(dir, fmt.Sprintf("file%02d.go", i)), old, old)
	}
	rec := e2etest.Replay(b, e2etest.ToolCallsAt(0, reads...), e2etest.ToolCallsAt(1, edits...), e2etest.Text(nil, []string{"Done."}, "stop"))
	p := startProcEnv(b, nil, "--replay", rec, "--mode", "bypassPermissions")
	p.send(b, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	p.next(b)
	sid, _ := p.newSession(b, 2, dir, `[]`)
	t0 := time.Now()
	var editStart time.Time
	p.send(b, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"go"}]}}`)
	for {
		l := p.next(b)
		if editStart.IsZero() && bytes.Contains(l, []byte(`"sessionUpdate":"tool_call"`)) && bytes.Contains(l, []byte(`"kind":"edit"`)) {
			editStart = time.Now()
		}
		if bytes.Contains(l, []byte(`"id":3`)) && bytes.Contains(l, []byte(`"stopReason"`)) {
			break
		}
	}
	end := time.Now()
	p.stdin.Close()
	p.wait(b)
	if got, _ := os.ReadFile(filepath.Join(dir, "file49.go")); !bytes.Contains(got, []byte("computed(1000)")) {
		b.Fatal("the edits were not applied")
	}
	if editStart.IsZero() {
		b.Fatal("no edit card")
	}
	st := p.cmd.ProcessState
	return end.Sub(t0), end.Sub(editStart), st.UserTime() + st.SystemTime()
}
