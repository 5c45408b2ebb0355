package e2etest

import (
	"context"
	"os/exec"
	"reflect"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
)

// TestStreamsReplay: the streams written by Replay come back through the
// replay client assembled as the model meant them: the reasoning and text
// joined, the tool calls with their ids, names and whole arguments, the
// finish reasons.
func TestStreamsReplay(t *testing.T) {
	dir := Replay(t,
		Text([]string{"Think", "ing."}, []string{"PO", "NG"}, "stop"),
		ToolCalls([2]string{"read", `{"file_path":"a.txt"}`}, [2]string{"bash", `{"command":"ls","description":"List"}`}),
	)
	r := llm.NewReplay(dir)
	first, err := r.Stream(context.Background(), llm.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Reasoning != "Thinking." || first.Text != "PONG" || first.FinishReason != "stop" || len(first.ToolCalls) != 0 {
		t.Errorf("text response = %+v", first)
	}
	second, err := r.Stream(context.Background(), llm.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{
		{ID: "call_00_0", Name: "read", Arguments: `{"file_path":"a.txt"}`},
		{ID: "call_00_1", Name: "bash", Arguments: `{"command":"ls","description":"List"}`},
	}
	if second.FinishReason != "tool_calls" || second.Reasoning != "I will use a tool." || !reflect.DeepEqual(second.ToolCalls, want) {
		t.Errorf("tool-call response = %+v", second)
	}
	if _, err := r.Stream(context.Background(), llm.Request{}, nil); err == nil {
		t.Error("a third request was answered; Replay wrote only two bodies")
	}
}

// TestProcessesWith finds a process by a marker in its command line, and
// no longer once it has exited.
func TestProcessesWith(t *testing.T) {
	marker := "e2etest-marker-" + t.Name()
	// Two commands, so the shell cannot exec sleep in its place: its own
	// command line keeps the marker.
	cmd := exec.Command("sh", "-c", "sleep 30; : "+marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if got := ProcessesWith(marker); len(got) != 1 {
		t.Errorf("ProcessesWith while running = %q, want one process", got)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if got := ProcessesWith(marker); len(got) != 0 {
		t.Errorf("ProcessesWith after exit = %q, want none", got)
	}
}
