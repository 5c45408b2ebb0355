package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/present"
	"github.com/dsh-acp/dsh-acp/tools"
)

// What "fits" a permission request when a question's choices become its
// options (ACP PermissionOption): at most MaxChoiceButtons choices, each
// at most MaxChoiceButtonRunes runes. Zed shows a permission request's
// options as one row of buttons under the card (each with its name and a
// check mark for the allow kinds), so more or longer choices would not
// read as a choice there; such a question is asked in the conversation
// instead.
const (
	MaxChoiceButtons     = 4
	MaxChoiceButtonRunes = 40
)

// The permission options of a question asked as a permission request:
// choice-1 .. choice-N (kind allow_once: picking one is saying yes to it),
// then declineOption (kind reject_once).
const (
	choiceOptionPrefix = "choice-"
	declineOption      = "decline"
)

// elicitField is the name of the one field of a question's form.
const elicitField = "answer"

// asker is a session's tools.Asker. It asks with what the editor offered
// when the session was created or loaded: an elicitation form
// (`elicitation/create`, when clientCapabilities.elicitation.form was
// advertised), else, for a question whose choices fit (ChoicesFit), a
// `session/request_permission` whose options are the choices; else it
// asks nothing (tools.ErrNotAsked: the question ends the turn). An editor
// that fails the elicitation request gets the next way; one that fails
// the permission request, too.
type asker struct {
	b      *Bridge
	s      *liveSession
	elicit bool
}

var _ tools.Asker = (*asker)(nil)

// ChoicesFit reports whether choices can be offered as the options of a
// permission request: 1 to MaxChoiceButtons choices of at most
// MaxChoiceButtonRunes runes each. A free-form question (no choices)
// never fits: a permission request cannot take text.
func ChoicesFit(choices []string) bool {
	if len(choices) == 0 || len(choices) > MaxChoiceButtons {
		return false
	}
	for _, c := range choices {
		if utf8.RuneCountInString(c) > MaxChoiceButtonRunes {
			return false
		}
	}
	return true
}

// Ask implements tools.Asker.
func (a *asker) Ask(ctx context.Context, q tools.Question) (tools.Answer, error) {
	if a.elicit {
		ans, err := a.elicitation(ctx, q)
		if err == nil || ctx.Err() != nil {
			return ans, err
		}
		a.b.log.Warn("the editor failed the elicitation request; asking another way", "session", a.s.id, "err", err)
	}
	if ChoicesFit(q.Choices) {
		ans, err := a.permission(ctx, q)
		if err == nil || ctx.Err() != nil {
			return ans, err
		}
		a.b.log.Warn("the editor failed the permission request of a question; asking in the conversation", "session", a.s.id, "err", err)
	}
	return tools.Answer{}, tools.ErrNotAsked
}

// elicitation asks with a form of one required string field, "answer":
// a single select of the choices, or free text.
func (a *asker) elicitation(ctx context.Context, q tools.Question) (tools.Answer, error) {
	field := acp.ElicitationPropertySchema{Type: "string", Title: "Answer"}
	if len(q.Choices) > 0 {
		field.Enum = q.Choices
	}
	res, err := a.b.client.CreateElicitation(ctx, acp.CreateElicitationRequest{
		Mode: acp.ElicitForm, Message: q.Text, SessionID: a.s.id, ToolCallID: q.CallID,
		RequestedSchema: &acp.ElicitationSchema{Type: "object",
			Properties: map[string]acp.ElicitationPropertySchema{elicitField: field}, Required: []string{elicitField}},
	})
	if err != nil {
		return tools.Answer{}, err
	}
	ans := tools.Answer{Via: "elicitation"}
	switch res.Action {
	case acp.ElicitAccept:
		// The form asked for one required answer, one of the choices when
		// there are some: an editor that does not check its form may send
		// none, or another; that is no answer the user was offered.
		v := res.Content[elicitField]
		if s, ok := v.(string); v == nil || len(q.Choices) > 0 && (!ok || !slices.Contains(q.Choices, s)) {
			a.b.log.Warn("an accepted elicitation without one of the offered answers; taking it as dismissed", "session", a.s.id)
			ans.Action = tools.AnswerCancelled
			break
		}
		ans.Action, ans.Text = tools.AnswerAccepted, answerText(v)
	case acp.ElicitDecline:
		ans.Action = tools.AnswerDeclined
	case acp.ElicitCancel:
		ans.Action = tools.AnswerCancelled
	default:
		// An action of a later protocol: not an answer we understand.
		a.b.log.Warn("unknown elicitation action; taking it as dismissed", "action", res.Action)
		ans.Action = tools.AnswerCancelled
	}
	return ans, nil
}

// answerText is a form value as text: a string as it is, a list of
// strings joined with ", ", anything else as JSON; nil (never passed by
// elicitation: no answer) is "(no answer)".
func answerText(v any) string {
	switch x := v.(type) {
	case nil:
		return "(no answer)"
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = answerText(e)
		}
		return strings.Join(parts, ", ")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// permission asks with a permission request on the call's card whose
// options are the choices (allow_once each) and "Decline" (reject_once).
// A cancelled outcome (the editor's answer when the turn is cancelled, or
// the user dismissing it) is AnswerCancelled. It waits for the
// session's other permission requests, one at a time.
func (a *asker) permission(ctx context.Context, q tools.Question) (tools.Answer, error) {
	opts := make([]acp.PermissionOption, 0, len(q.Choices)+1)
	for i, c := range q.Choices {
		opts = append(opts, acp.PermissionOption{OptionID: choiceOptionPrefix + strconv.Itoa(i+1), Name: c, Kind: acp.AllowOnce})
	}
	opts = append(opts, acp.PermissionOption{OptionID: declineOption, Name: "Decline", Kind: acp.RejectOnce})
	call := q.Call
	if !call.Matches(q.Tool, q.Args) {
		call = a.b.cfg.Tools.Resolve(a.s.agent.Tools, q.CallID, q.Tool, q.Args)
	}
	card := present.PermissionCard(a.s.view, call, nil)
	a.s.perm.ask.Lock()
	defer a.s.perm.ask.Unlock()
	res, err := a.b.client.RequestPermission(ctx, acp.RequestPermissionRequest{SessionID: a.s.id, ToolCall: card, Options: opts})
	if err != nil {
		return tools.Answer{}, err
	}
	ans := tools.Answer{Via: "permission", Action: tools.AnswerCancelled}
	if res.Outcome.Outcome != acp.OutcomeSelected {
		return ans, nil
	}
	if res.Outcome.OptionID == declineOption {
		ans.Action = tools.AnswerDeclined
		return ans, nil
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(res.Outcome.OptionID, choiceOptionPrefix)); err == nil &&
		strings.HasPrefix(res.Outcome.OptionID, choiceOptionPrefix) && n >= 1 && n <= len(q.Choices) {
		ans.Action, ans.Text = tools.AnswerAccepted, q.Choices[n-1]
		return ans, nil
	}
	a.b.log.Warn("unknown option for a question; taking it as dismissed", "optionId", res.Outcome.OptionID)
	return ans, nil
}
