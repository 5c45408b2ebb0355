// Package toolask is the ask_user tool: the model asks the user a
// question, with a few choices or for a short free answer, and gets the
// answer (or "declined" / "cancelled") as the call's result.
//
// The tool asks through the session's tools.Asker, which the bridge
// implements with what the editor offers (an ACP elicitation form, or a
// permission request whose options are the choices). When the editor
// offers no way that fits the question (tools.ErrNotAsked, or no asker),
// the question ends the turn: it is shown as the agent's message
// (tools.Output.EndTurn) and the user's next prompt is the answer.
//
// The call changes nothing, so it never asks permission
// (tools.ClassAgentState: it only touches the conversation, which the
// agent owns), and it is not concurrency-safe: one question at a time,
// in the model's order among the other calls.
package toolask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Name is the tool's name.
const Name = "ask_user"

// Limits on the arguments, in runes: MaxOptions choices at most, each at
// most MaxOptionRunes long, and a question of at most MaxQuestionRunes.
const (
	MaxOptions       = 10
	MaxOptionRunes   = 200
	MaxQuestionRunes = 4000
)

// titleRunes is how much of the question's first line a card title shows.
const titleRunes = 120

// Args are the tool's arguments.
type Args struct {
	Question string   `json:"question"`
	Options  []string `json:"options,omitempty"`
}

const description = `Ask the user a question and wait for the answer.

Use it when you need a decision or a fact that only the user has (which of two approaches to take, a name, a missing detail). Do not use it for what you can find out with the other tools, and do not use it to ask permission: the editor asks the user before risky actions by itself.

- question: one clear, self-contained question.
- options: when the answer is one of a few choices, list them (2 to 4 short choices of a few words work best; no line breaks). Leave it out for a free answer.

The result is the user's answer, or says that the user declined or dismissed the question. Ask one question per call. When the editor cannot show the question, it is shown to the user as your message and the turn ends there; the user's next message is the answer.`

var spec = tools.Spec{
	{Name: "question", Prop: tools.Prop{Type: tools.TypeString, Required: true,
		Description: "The question to ask, in the user's language."}},
	{Name: "options", Prop: tools.Prop{Type: tools.TypeArray,
		Description: fmt.Sprintf("Choices to offer, in order (at most %d, each one line). Leave out for a free answer.", MaxOptions),
		Items:       &tools.Prop{Type: tools.TypeString}}},
}

// New returns the ask_user tool.
func New() tools.Tool {
	return tools.Define(tools.Def[Args]{
		Name:        Name,
		Description: description,
		// Asking changes nothing in the workspace or elsewhere: it is
		// the agent's own conversation, so it runs unasked in every
		// mode (plan included). Not concurrency-safe: one question at
		// a time.
		Class:         tools.ClassAgentState,
		Spec:          spec,
		Execute:       execute,
		PresentCall:   presentCall,
		PresentResult: presentResult,
	})
}

// Pending is the Meta action of a question that ended the turn: its
// answer is the user's next prompt.
const Pending = "pending"

// meta is the result's Meta: what happened to the question, for the
// result card.
type meta struct {
	Action string `json:"action"` // a tools.Answer* action, or Pending
	Answer string `json:"answer,omitempty"`
	Via    string `json:"via,omitempty"`
}

// The texts the model gets back.
const (
	declinedText  = "The user declined to answer."
	cancelledText = "The user dismissed the question without answering."
	pendingText   = "The editor cannot show this question, so it is shown to the user as your message and this turn ends now. The user's next message is the answer."
)

// execute checks the arguments, asks and returns the answer: "The user
// answered: <answer>", declinedText or cancelledText; when the question
// cannot be asked in the editor, pendingText with EndTurn set to the
// question (and its choices as a numbered list). Errors: the argument
// rules of Check; ctx's error when the turn is cancelled while the user
// decides; an editor failure.
func execute(ctx context.Context, ex *tools.Exec, a Args) (tools.Output, error) {
	q, err := Check(a)
	if err != nil {
		return tools.Output{}, err
	}
	q.CallID, q.Tool, q.Args, q.Call = ex.CallID, ex.Name, ex.Args, ex.Call
	asker := tools.AskerOf(ex.Session)
	ans, err := tools.Answer{}, tools.ErrNotAsked
	if asker != nil {
		ans, err = asker.Ask(ctx, q)
	}
	switch {
	case errors.Is(err, tools.ErrNotAsked):
		return output(pendingText, meta{Action: Pending}, Message(q)), nil
	case err != nil:
		if ctx.Err() != nil {
			return tools.Output{}, ctx.Err()
		}
		return tools.Output{}, fmt.Errorf("the editor could not ask the question: %w", err)
	}
	m := meta{Action: ans.Action, Answer: ans.Text, Via: ans.Via}
	switch ans.Action {
	case tools.AnswerAccepted:
		return output("The user answered: "+ans.Text, m, ""), nil
	case tools.AnswerDeclined:
		return output(declinedText, m, ""), nil
	}
	m.Action = tools.AnswerCancelled
	return output(cancelledText, m, ""), nil
}

func output(text string, m meta, endTurn string) tools.Output {
	raw, _ := json.Marshal(m)
	return tools.Output{Content: []tools.Content{tools.Text(text)}, Meta: raw, EndTurn: endTurn}
}

// Check applies the rules the schema cannot express and returns the
// question (trimmed). Errors: "`question` must not be empty",
// "`question` is longer than 4000 characters", "at most 10 options,
// got N", "option N is empty", "option N spans several lines",
// "option N is longer than 200 characters", `option N repeats "x"` (N
// 1-based; characters are runes).
func Check(a Args) (tools.Question, error) {
	q := tools.Question{Text: strings.TrimSpace(a.Question)}
	switch {
	case q.Text == "":
		return q, errors.New("`question` must not be empty")
	case utf8.RuneCountInString(q.Text) > MaxQuestionRunes:
		return q, fmt.Errorf("`question` is longer than %d characters", MaxQuestionRunes)
	case len(a.Options) > MaxOptions:
		return q, fmt.Errorf("at most %d options, got %d", MaxOptions, len(a.Options))
	}
	seen := map[string]bool{}
	for i, o := range a.Options {
		o = strings.TrimSpace(o)
		n := i + 1
		switch {
		case o == "":
			return q, fmt.Errorf("option %d is empty", n)
		case strings.ContainsAny(o, "\r\n"):
			return q, fmt.Errorf("option %d spans several lines", n)
		case utf8.RuneCountInString(o) > MaxOptionRunes:
			return q, fmt.Errorf("option %d is longer than %d characters", n, MaxOptionRunes)
		case seen[o]:
			return q, fmt.Errorf("option %d repeats %q", n, o)
		}
		seen[o] = true
		q.Choices = append(q.Choices, o)
	}
	return q, nil
}

// Message is the agent's message for a question asked in the
// conversation: the question, then its choices as a numbered list (so
// the user can answer with a number).
func Message(q tools.Question) string {
	if len(q.Choices) == 0 {
		return q.Text
	}
	return q.Text + "\n\n" + choiceList(q.Choices)
}

// choiceList is the choices as a Markdown numbered list.
func choiceList(choices []string) string {
	var b strings.Builder
	for i, c := range choices {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strconv.Itoa(i+1) + ". " + c)
	}
	return b.String()
}

// Title is a card title for question q: its first line, cut at 120 runes
// with "…" (or "…" added when more lines follow), Markdown-safe
// (tools.MarkdownInline).
func Title(q string) string {
	q = strings.TrimSpace(q)
	line, rest, more := strings.Cut(q, "\n")
	line = strings.TrimSpace(line)
	if r := []rune(line); len(r) > titleRunes {
		line, more = string(r[:titleRunes-1]), true
	}
	if more || rest != "" {
		line += "…"
	}
	return tools.MarkdownInline(line)
}

// presentCall is the pending card: kind other, the question as its
// title, and as content the whole question when the title does not hold
// it, then the choices.
func presentCall(a Args) tools.ToolCallView {
	return tools.GenericCall{Title: Title(a.Question), Kind: tools.KindOther, RawInput: salient(a), Content: callContent(a)}
}

// salient is the call's rawInput: the arguments, as given.
func salient(a Args) json.RawMessage {
	raw, err := json.Marshal(a)
	if err != nil {
		return nil
	}
	return raw
}

func callContent(a Args) []tools.Content {
	var out []tools.Content
	q := strings.TrimSpace(a.Question)
	if strings.Contains(q, "\n") || utf8.RuneCountInString(q) > titleRunes || Title(q) != q {
		out = append(out, tools.Text(q))
	}
	var choices []string
	for _, o := range a.Options {
		if o = strings.TrimSpace(o); o != "" {
			choices = append(choices, o)
		}
	}
	if len(choices) > 0 {
		out = append(out, tools.Text(choiceList(choices)))
	}
	return out
}

// presentResult is the final card: the call's content, then the answer
// ("Answer: …", "Declined.", "Dismissed.", or, for a question asked in
// the conversation, that the next message answers it). An error result
// (invalid arguments, a cancel) keeps the generic card: its error text.
func presentResult(a Args, r tools.ResultInput) tools.ToolResultView {
	var m meta
	if r.IsError || json.Unmarshal(r.Meta, &m) != nil {
		return nil
	}
	var line string
	switch m.Action {
	case tools.AnswerAccepted:
		line = "Answer: " + m.Answer
	case tools.AnswerDeclined:
		line = "Declined."
	case tools.AnswerCancelled:
		line = "Dismissed."
	case Pending:
		line = "Asked in the conversation: the next message is the answer."
	default:
		return nil
	}
	return tools.GenericResult{Content: append(callContent(a), tools.Text(line))}
}
