package e2etest

import (
	"context"
	"os/exec"
	"reflect"
	"regexp"
	"testing"

	"github.com/dsh-acp/dsh-acp/llm"
)

// TestStreamsReplay: the streams written by Replay come back through the
// replay client assembled as the model meant them: the reasoning and text
// joined, the tool calls with their ids, names and whole arguments, the
// finish reasons and the usage. (llm's TestBuilderShape checks their bytes
// against the live format.)
func TestStreamsReplay(t *testing.T) {
	read, bash := [2]string{"read", `{"file_path":"a.txt"}`}, [2]string{"bash", `{"command":"ls && echo <ok>","description":"List"}`}
	dir := Replay(t,
		Text([]string{"Think", "ing."}, []string{"PO", "NG"}, "stop"),
		ToolCalls(read, bash),
		ToolCallsAt(1, read),
		Text(nil, []string{"Done."}, "length"),
	)
	r := llm.NewReplay(dir)
	next := func() *llm.Response {
		t.Helper()
		resp, err := r.Stream(context.Background(), llm.Request{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := next()
	if first.Reasoning != "Thinking." || first.Text != "PONG" || first.FinishReason != "stop" || len(first.ToolCalls) != 0 {
		t.Errorf("text response = %+v", first)
	}
	if u := first.Usage; u == nil || u.PromptTokens != 287 || u.CacheHitTokens != 256 || u.ReasoningTokens != 3 || u.CompletionTokens != 5 || u.TotalTokens != 292 {
		t.Errorf("text response usage = %+v", first.Usage)
	}
	// UsageOf reads what the replay client read.
	body := Text([]string{"Think", "ing."}, []string{"PO", "NG"}, "stop")
	if u := UsageOf(t, body); u != (Usage{Prompt: 287, Completion: 5, Reasoning: 3, CacheHit: 256, CacheMiss: 31}) || u.Used() != 292 {
		t.Errorf("UsageOf = %+v", u)
	}
	second := next()
	want := []llm.ToolCall{
		{ID: CallID(0, 0, read[0], read[1]), Name: read[0], Arguments: read[1]},
		{ID: CallID(0, 1, bash[0], bash[1]), Name: bash[0], Arguments: bash[1]},
	}
	if second.FinishReason != "tool_calls" || second.Reasoning != "I will use a tool." || !reflect.DeepEqual(second.ToolCalls, want) {
		t.Errorf("tool-call response = %+v", second)
	}
	third := next()
	if len(third.ToolCalls) != 1 || third.ToolCalls[0].ID != CallID(1, 0, read[0], read[1]) || third.ToolCalls[0].ID == want[0].ID {
		t.Errorf("the same call in step 1 = %+v, want its own id", third.ToolCalls)
	}
	for _, id := range []string{want[0].ID, want[1].ID, third.ToolCalls[0].ID} {
		if !regexp.MustCompile(`^call_0[01]_[A-Za-z0-9]{24}$`).MatchString(id) {
			t.Errorf("call id %q, want call_NN_ and 24 letters and digits", id)
		}
	}
	if fourth := next(); fourth.Reasoning != "The answer is ready." || fourth.Text != "Done." || fourth.FinishReason != "length" {
		t.Errorf("text response without reasoning = %+v", fourth)
	}
	if _, err := r.Stream(context.Background(), llm.Request{}, nil); err == nil {
		t.Error("a fifth request was answered; Replay wrote only four bodies")
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

// TestChunkedStream: a stream whose arguments arrive in many small pieces
// (one character each for the first call, cut inside keys, strings and a
// multi-byte character) assembles to the same calls, and the pieces are
// as small as asked.
func TestChunkedStream(t *testing.T) {
	args := `{"file_path":"日本/a_b.txt","content":"x\ny"}`
	if p := Pieces(args, 0); len(p) != len([]rune(args)) {
		t.Errorf("%d one-character pieces for %d characters", len(p), len([]rune(args)))
	}
	for _, p := range Pieces(args, 4) {
		if len(p) > 4 && len([]rune(p)) != 1 {
			t.Errorf("piece %q over 4 bytes", p)
		}
	}
	dir := Replay(t, ToolCallsChunked(0, [2]string{"write", args}, [2]string{"bash", `{"command":"ls"}`}))
	var pieces int
	resp, err := llm.NewReplay(dir).Stream(context.Background(), llm.Request{}, func(d llm.Delta) {
		if d.Kind == llm.DeltaToolArgs {
			pieces++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "call_00_0", Name: "write", Arguments: args}, {ID: "call_00_1", Name: "bash", Arguments: `{"command":"ls"}`}}
	if !reflect.DeepEqual(resp.ToolCalls, want) || resp.FinishReason != "tool_calls" || resp.Usage == nil || pieces != len([]rune(args))+len(`{"command":"ls"}`) {
		t.Errorf("response %+v, %d pieces", resp, pieces)
	}
}

// TestLiveStreams: LiveText and LiveToolCall (whose byte shape llm's
// TestBuilderShape checks) replay with the usage chosen, the text, the
// call and its id; CutStream is read as broken off.
func TestLiveStreams(t *testing.T) {
	u := LiveUsage{Prompt: 110400, Completion: 900, CacheHit: 109952, Reasoning: 120}
	bodies := []string{
		LiveText([]string{"Let me", " think."}, []string{"Done", " <ok> & \"quoted\"."}, u),
		LiveToolCall([]string{"Reading."}, 3, "read", `{"file_path":"é/a.txt"}`, u),
	}
	r := llm.NewReplay(Replay(t, bodies...))
	text, err := r.Stream(context.Background(), llm.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text.Text != `Done <ok> & "quoted".` || text.Reasoning != "Let me think." || text.FinishReason != "stop" ||
		text.Usage == nil || text.Usage.PromptTokens != 110400 || text.Usage.CompletionTokens != 900 || text.Usage.CacheHitTokens != 109952 {
		t.Errorf("text response %+v usage %+v", text, text.Usage)
	}
	call, err := r.Stream(context.Background(), llm.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: CallID(3, 0, "read", `{"file_path":"é/a.txt"}`), Name: "read", Arguments: `{"file_path":"é/a.txt"}`}}
	if !reflect.DeepEqual(call.ToolCalls, want) || call.FinishReason != "tool_calls" || call.Usage == nil || call.Usage.ReasoningTokens != 120 {
		t.Errorf("tool call response %+v", call)
	}
	if _, err := llm.NewReplay(Replay(t, CutStream("Half a sum"))).Stream(context.Background(), llm.Request{}, nil); err == nil {
		t.Error("a cut stream was read as whole")
	}
}
