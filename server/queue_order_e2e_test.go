package server_test

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/acpclient"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/server"
)

// TestQueuedTurnAfterAnswerE2E: a queued prompt's turn writes nothing
// before the answer of the turn it waited for. Each turn's model request
// is held while the next prompt is queued and a new command file is
// written, so the queued turn's first update (the commands, sent as it
// starts) is ready at once; it must still follow the earlier answer.
func TestQueuedTurnAfterAnswerE2E(t *testing.T) {
	t.Parallel()
	const turns = 25
	release := make([]chan struct{}, turns+2)
	for i := range release {
		release[i] = make(chan struct{})
	}
	f := newFakeModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		hs := e2etest.NewHeldStream(0)
		_, _ = io.WriteString(w, hs.Text(fmt.Sprintf("held %d", n)))
		w.(http.Flusher).Flush()
		select {
		case <-release[n]:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, hs.Done("stop"))
	})
	h := newHarness(t, harnessOpts{model: f.client("k")})
	sid := h.start(harnessOpts{})
	chans := []<-chan acpclient.Message{sendPrompt(t, h, sid, "turn 1", nil)}
	for k := 1; k < turns; k++ {
		waitFor(t, func() bool { return f.requests() == k })
		h.waitAgentLine(0, fmt.Sprintf(`"held %d"`, k))
		chans = append(chans, sendPrompt(t, h, sid, fmt.Sprintf("turn %d", k+1), nil))
		readBarrier(t, h)
		writeFile(t, filepath.Join(h.cwd, ".dsh", "commands", fmt.Sprintf("c%d.md", k)), "Do thing "+fmt.Sprint(k))
		close(release[k])
		if r := stopReasonOf(t, chans[k-1]); r != acp.StopEndTurn {
			t.Fatalf("turn %d: %s", k, r)
		}
	}
	waitFor(t, func() bool { return f.requests() == turns })
	close(release[turns])
	if r := stopReasonOf(t, chans[turns-1]); r != acp.StopEndTurn {
		t.Fatalf("last turn: %s", r)
	}
	bad := 0
	for k := 1; k < turns; k++ {
		// Prompt k's request id: initialize 1, session/new 2, prompt 1
		// 3, then each prompt followed by its barrier.
		id := 2 * k
		if k == 1 {
			id = 3
		}
		answer := agentLineIndex(h, fmt.Sprintf(`"id":%d,"result":{"stopReason":"end_turn"`, id))
		update := agentLineIndex(h, `"available_commands_update"`, fmt.Sprintf(`"c%d"`, k))
		if answer < 0 || update < 0 {
			t.Fatalf("turn %d: answer line %d, commands line %d", k, answer, update)
		}
		if update < answer {
			bad++
			t.Errorf("turn %d+1's commands (line %d) came before turn %d's answer (line %d)", k, update, k, answer)
		}
	}
	t.Logf("%d of %d hand-offs out of order", bad, turns-1)
}

// TestSteeringAtLastStepE2E: a steering prompt sent while the model
// streams its final answer at the turn's last allowed step cannot join
// that turn (no request is left): the turn ends end_turn with its
// answer, and the steering prompt runs as a turn of its own, whose
// request carries the message.
func TestSteeringAtLastStepE2E(t *testing.T) {
	t.Parallel()
	v := promptsDuringFinalText(t, harnessOpts{options: oneStep}, steering, "shorter")
	v.wantAnswers(t, 2, acp.StopEndTurn, acp.StopEndTurn)
	if _, last := v.requestTail(t, 2); messageText(last) != "shorter" {
		t.Errorf("second request ends with %q, want the steering message", messageText(last))
	}
}

// TestSteeringAfterLastStepToolsE2E: a steering prompt sent while the
// last allowed step's command runs is not taken by that turn (it ends
// max_turn_requests, no request left): it runs as a turn of its own.
func TestSteeringAfterLastStepToolsE2E(t *testing.T) {
	t.Parallel()
	v := promptsDuringCommand(t, harnessOpts{options: oneStep}, "Steered.", steering, "use the other file")
	v.wantAnswers(t, 2, acp.StopMaxTurnRequests, acp.StopEndTurn)
	if _, last := v.requestTail(t, 2); messageText(last) != "use the other file" {
		t.Errorf("second request ends with %q, want the steering message", messageText(last))
	}
}

// oneStep allows a turn one model request.
func oneStep(o *server.Options) { o.MaxSteps = 1 }

// TestSteeringCommandE2E: a steering prompt that is a slash command the
// session offers runs that command as a turn of its own (a command's
// prompt cannot join a running turn: /compact and /review need a turn
// of their own): the running turn ends at its next step, and the next
// turn's request carries the command's prompt, not the typed "/fix".
func TestSteeringCommandE2E(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	writeFile(t, filepath.Join(cwd, ".dsh", "commands", "fix.md"), "Write a failing test for $ARGUMENTS, then fix it.\n")
	v := promptsDuringCommand(t, harnessOpts{cwd: cwd}, "Fixed.", steering, "/fix the parser")
	v.wantAnswers(t, 2, acp.StopEndTurn, acp.StopEndTurn)
	if _, last := v.requestTail(t, 2); messageText(last) != "Write a failing test for the parser, then fix it.\n" {
		t.Errorf("second request ends with %q, want the command's prompt", messageText(last))
	}
}
