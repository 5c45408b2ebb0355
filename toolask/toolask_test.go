package toolask

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// fakeAsker answers every question with ans/err and records them.
type fakeAsker struct {
	ans   tools.Answer
	err   error
	asked []tools.Question
	block bool // wait for ctx instead
}

func (f *fakeAsker) Ask(ctx context.Context, q tools.Question) (tools.Answer, error) {
	f.asked = append(f.asked, q)
	if f.block {
		<-ctx.Done()
		return tools.Answer{}, ctx.Err()
	}
	return f.ans, f.err
}

func run(t *testing.T, ctx context.Context, asker tools.Asker, args string) tools.Result {
	t.Helper()
	reg := tools.NewRegistry()
	if err := reg.Register(New()); err != nil {
		t.Fatal(err)
	}
	s := tools.NewSession("s", "/w")
	if asker != nil {
		tools.SetAsker(s, asker)
	}
	return reg.Execute(ctx, &tools.Exec{CallID: "c1", Name: Name, Args: json.RawMessage(args), Session: s})
}

func metaOf(t *testing.T, r tools.Result) meta {
	t.Helper()
	var m meta
	if err := json.Unmarshal(r.Meta, &m); err != nil {
		t.Fatalf("meta %s: %v", r.Meta, err)
	}
	return m
}

// TestAnswers: each way an asker can answer reaches the model as its
// text, with the answer in the result's Meta; the asker sees the call,
// the trimmed question and choices.
func TestAnswers(t *testing.T) {
	args := `{"question":"  Which database?  ","options":[" Postgres ","SQLite"]}`
	for _, c := range []struct {
		ans  tools.Answer
		text string
	}{
		{tools.Answer{Action: tools.AnswerAccepted, Text: "SQLite", Via: "elicitation"}, "The user answered: SQLite"},
		{tools.Answer{Action: tools.AnswerDeclined, Via: "permission"}, declinedText},
		{tools.Answer{Action: tools.AnswerCancelled, Via: "elicitation"}, cancelledText},
		{tools.Answer{Action: "something new"}, cancelledText},
	} {
		f := &fakeAsker{ans: c.ans}
		res := run(t, context.Background(), f, args)
		if res.IsError || tools.JoinText(res.Content) != c.text || res.EndTurn != "" {
			t.Errorf("%+v: result %+v, want %q", c.ans, res, c.text)
		}
		want := tools.Question{CallID: "c1", Tool: Name, Args: json.RawMessage(args), Text: "Which database?", Choices: []string{"Postgres", "SQLite"}}
		if len(f.asked) != 1 || f.asked[0].Call == nil || f.asked[0].Call.ID != "c1" || f.asked[0].Call.Name != Name {
			t.Fatalf("asked %+v, want the resolved call c1", f.asked)
		}
		got := f.asked[0]
		got.Call = nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("asked %+v, want %+v", got, want)
		}
		m := metaOf(t, res)
		wantAction := c.ans.Action
		if wantAction == "something new" {
			wantAction = tools.AnswerCancelled
		}
		if m.Action != wantAction || m.Answer != c.ans.Text || m.Via != c.ans.Via {
			t.Errorf("meta %+v for %+v", m, c.ans)
		}
	}
}

// TestNotAsked: without an asker, or when it cannot ask, the question
// ends the turn: EndTurn is the question and its numbered choices, and
// the model is told its next message is the answer.
func TestNotAsked(t *testing.T) {
	for name, asker := range map[string]tools.Asker{"no asker": nil, "ErrNotAsked": &fakeAsker{err: tools.ErrNotAsked}} {
		res := run(t, context.Background(), asker, `{"question":"Which one?","options":["A","B","C"]}`)
		if res.IsError || tools.JoinText(res.Content) != pendingText || res.EndTurn != "Which one?\n\n1. A\n2. B\n3. C" {
			t.Errorf("%s: %+v", name, res)
		}
		if m := metaOf(t, res); m.Action != Pending {
			t.Errorf("%s: meta %+v", name, m)
		}
	}
	if res := run(t, context.Background(), nil, `{"question":"Your name?"}`); res.EndTurn != "Your name?" {
		t.Errorf("free question: EndTurn %q", res.EndTurn)
	}
}

// TestAskFailures: an editor failure is an error result naming it; a
// cancel while the user decides returns the context's error.
func TestAskFailures(t *testing.T) {
	res := run(t, context.Background(), &fakeAsker{err: errors.New("boom")}, `{"question":"Q?"}`)
	if !res.IsError || tools.JoinText(res.Content) != "Error: the editor could not ask the question: boom" || res.EndTurn != "" {
		t.Errorf("editor failure: %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeAsker{block: true}
	done := make(chan tools.Result)
	go func() { done <- run(t, ctx, f, `{"question":"Q?"}`) }()
	cancel()
	if res := <-done; !res.IsError || !strings.Contains(tools.JoinText(res.Content), "context canceled") {
		t.Errorf("cancelled: %+v", res)
	}
}

// TestCheck: the argument rules, in order, with the texts the model sees.
func TestCheck(t *testing.T) {
	long := strings.Repeat("é", MaxQuestionRunes+1)
	many := `["1","2","3","4","5","6","7","8","9","10","11"]`
	for _, c := range []struct{ args, want string }{
		{`{"question":"  "}`, "Error: `question` must not be empty"},
		{`{"question":"` + long + `"}`, "Error: `question` is longer than 4000 characters"},
		{`{"question":"Q","options":` + many + `}`, "Error: at most 10 options, got 11"},
		{`{"question":"Q","options":["a"," "]}`, "Error: option 2 is empty"},
		{`{"question":"Q","options":["a\nb"]}`, "Error: option 1 spans several lines"},
		{`{"question":"Q","options":["` + strings.Repeat("x", MaxOptionRunes+1) + `"]}`, "Error: option 1 is longer than 200 characters"},
		{`{"question":"Q","options":["a"," a"]}`, `Error: option 2 repeats "a"`},
		{`{}`, `Error: invalid arguments: missing required property "question"`},
		{`{"question":"Q","options":"a"}`, `Error: invalid arguments: "options" must be an array`},
	} {
		f := &fakeAsker{}
		res := run(t, context.Background(), f, c.args)
		if !res.IsError || !strings.HasPrefix(tools.JoinText(res.Content), c.want) || len(f.asked) != 0 {
			t.Errorf("%s: %q (asked %d), want %q", c.args, tools.JoinText(res.Content), len(f.asked), c.want)
		}
	}
	if q, err := Check(Args{Question: strings.Repeat("é", MaxQuestionRunes), Options: make10()}); err != nil || len(q.Choices) != MaxOptions {
		t.Errorf("the limits themselves: %v", err)
	}
}

func make10() []string {
	var out []string
	for i := range MaxOptions {
		out = append(out, strings.Repeat("y", MaxOptionRunes-i))
	}
	return out
}

// TestCards: the call card is kind other titled with the question
// (Markdown-safe, first line, cut), with the whole question when the
// title does not hold it and the choices; the result card adds the
// answer.
func TestCards(t *testing.T) {
	tool := New()
	call := func(args string) tools.GenericCall {
		t.Helper()
		v, ok := tool.CallView(json.RawMessage(args)).(tools.GenericCall)
		if !ok {
			t.Fatalf("%s: no generic call view", args)
		}
		return v
	}
	v := call(`{"question":"Which database should I use?","options":["Postgres","SQLite"]}`)
	if v.Title != "Which database should I use?" || v.Kind != tools.KindOther ||
		!reflect.DeepEqual(v.Content, []tools.Content{tools.Text("1. Postgres\n2. SQLite")}) {
		t.Errorf("call card %+v", v)
	}
	if string(v.RawInput) != `{"question":"Which database should I use?","options":["Postgres","SQLite"]}` {
		t.Errorf("rawInput %s", v.RawInput)
	}
	v = call(`{"question":"Rename *foo*?\nIt is used in 3 files."}`)
	if v.Title != "`Rename *foo*?…`" || !reflect.DeepEqual(v.Content, []tools.Content{tools.Text("Rename *foo*?\nIt is used in 3 files.")}) {
		t.Errorf("multi-line card %+v", v)
	}
	long := strings.Repeat("a", 130) + "?"
	if v = call(`{"question":"` + long + `"}`); v.Title != strings.Repeat("a", 119)+"…" || len(v.Content) != 1 || v.Content[0].Text != long {
		t.Errorf("long question card %+v", v)
	}

	args := json.RawMessage(`{"question":"Which?","options":["A","B"]}`)
	for action, line := range map[string]string{
		tools.AnswerAccepted: "Answer: B", tools.AnswerDeclined: "Declined.", tools.AnswerCancelled: "Dismissed.",
		Pending: "Asked in the conversation: the next message is the answer.",
	} {
		m, _ := json.Marshal(meta{Action: action, Answer: "B"})
		r, ok := tool.ResultView(args, tools.ResultInput{Content: []tools.Content{tools.Text("x")}, Meta: m}).(tools.GenericResult)
		want := []tools.Content{tools.Text("1. A\n2. B"), tools.Text(line)}
		if !ok || r.Title != "" || !reflect.DeepEqual(r.Content, want) {
			t.Errorf("%s: result card %+v, want %v", action, r, want)
		}
	}
	if v := tool.ResultView(args, tools.ResultInput{IsError: true, Content: []tools.Content{tools.Text("Error: x")}}); v != nil {
		t.Errorf("error result card %+v, want the generic fallback", v)
	}
	if tool.Class != tools.ClassAgentState || tool.ConcurrencySafe {
		t.Errorf("class %v, concurrency-safe %v", tool.Class, tool.ConcurrencySafe)
	}
}
