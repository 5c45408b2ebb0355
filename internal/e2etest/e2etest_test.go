package e2etest

import (
	"context"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
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
// multi-byte character) assembles to the same calls, with ToolCallsAt's
// ids, and the pieces are as small as asked.
func TestChunkedStream(t *testing.T) {
	args := `{"file_path":"日本/a_b.txt","content":"x\ny"}`
	if p := pieces(args, 0); len(p) != len([]rune(args)) {
		t.Errorf("%d one-character pieces for %d characters", len(p), len([]rune(args)))
	}
	for _, size := range []int{1, 2, 4} {
		p := pieces(args, size)
		for _, piece := range p {
			if len(piece) > size && len([]rune(piece)) != 1 {
				t.Errorf("piece %q over %d bytes", piece, size)
			}
		}
		if strings.Join(p, "") != args {
			t.Errorf("pieces of %d bytes join to %q", size, strings.Join(p, ""))
		}
	}
	if p := pieces("a\xffb", 1); !reflect.DeepEqual(p, []string{"a", "\xff", "b"}) {
		t.Errorf("pieces of an invalid byte = %q, want it a piece of its own", p)
	}
	write, bash := [2]string{"write", args}, [2]string{"bash", `{"command":"ls"}`}
	dir := Replay(t, ToolCallsChunked(0, 0, write, bash), ToolCallsChunked(1, 3, write))
	r := llm.NewReplay(dir)
	var deltas int
	resp, err := r.Stream(context.Background(), llm.Request{}, func(d llm.Delta) {
		if d.Kind == llm.DeltaToolArgs {
			deltas++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: CallID(0, 0, write[0], write[1]), Name: "write", Arguments: args}, {ID: CallID(0, 1, bash[0], bash[1]), Name: "bash", Arguments: bash[1]}}
	if !reflect.DeepEqual(resp.ToolCalls, want) || resp.FinishReason != "tool_calls" || resp.Usage == nil || deltas != len([]rune(args))+len(bash[1]) {
		t.Errorf("response %+v, %d argument deltas", resp, deltas)
	}
	later, err := r.Stream(context.Background(), llm.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(later.ToolCalls) != 1 || later.ToolCalls[0].ID != CallID(1, 0, write[0], write[1]) || later.ToolCalls[0].Arguments != args {
		t.Errorf("the same call in step 1 = %+v, want its own id", later.ToolCalls)
	}
}

// TestHeldStream: the parts of a held stream, written one after another,
// replay as one response (default reasoning when the answer begins
// without any, arguments continued by Args, ids by CallID); a text
// answer likewise; each misuse that would leave DeepSeek's shape panics.
func TestHeldStream(t *testing.T) {
	m := NewHeldStream(2)
	first := m.Call("write", `{"file_path":"a.txt",`, 0)
	if !strings.HasPrefix(first, "data: ") || !strings.HasSuffix(first, "\n\n") || strings.Contains(first, "[DONE]") {
		t.Errorf("first part %q", first)
	}
	calls := first + m.Args(`"content":"<b> & c"}`, 5) + m.Call("bash", `{"command":"ls"}`, 3) + m.Done("tool_calls")
	n := NewHeldStream(0)
	text := n.Reasoning("Let me", " see.") + n.Text("Hel", "lo.") + n.Done("stop")
	r := llm.NewReplay(Replay(t, calls, text))
	resp, err := r.Stream(context.Background(), llm.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{
		{ID: CallID(2, 0, "write", `{"file_path":"a.txt",`), Name: "write", Arguments: `{"file_path":"a.txt","content":"<b> & c"}`},
		{ID: CallID(2, 1, "bash", `{"command":"ls"}`), Name: "bash", Arguments: `{"command":"ls"}`},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) || resp.Reasoning != "I will use a tool." || resp.FinishReason != "tool_calls" || resp.Usage == nil {
		t.Errorf("held tool calls = %+v", resp)
	}
	if m.CallID(0) != want[0].ID || m.CallID(1) != want[1].ID {
		t.Errorf("CallID = %q, %q", m.CallID(0), m.CallID(1))
	}
	resp, err = r.Stream(context.Background(), llm.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Reasoning != "Let me see." || resp.Text != "Hello." || resp.FinishReason != "stop" || resp.Usage == nil || resp.Usage.CacheHitTokens != 256 {
		t.Errorf("held text = %+v", resp)
	}
	misuses := map[string]func(h *HeldStream){
		"reasoning after text":   func(h *HeldStream) { h.Text("a"); h.Reasoning("b") },
		"text after a call":      func(h *HeldStream) { h.Call("read", "{}", 0); h.Text("a") },
		"arguments before calls": func(h *HeldStream) { h.Args("{}", 0) },
		"stop after a call":      func(h *HeldStream) { h.Call("read", "{}", 0); h.Done("stop") },
		"tool_calls after text":  func(h *HeldStream) { h.Text("a"); h.Done("tool_calls") },
		"done without answer":    func(h *HeldStream) { h.Reasoning("a"); h.Done("stop") },
		"events after Done":      func(h *HeldStream) { h.Text("a"); h.Done("stop"); h.Text("b") },
	}
	for name, f := range misuses {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f(NewHeldStream(0))
		}()
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
