package tools

import (
	"context"
	"encoding/json"
	"errors"
)

// Question is a question the model puts to the user (the ask_user tool),
// as an Asker receives it.
type Question struct {
	// CallID, Tool and Args are the tool call asking: its id, the tool's
	// name and its raw arguments (an asker shows the call's card with
	// them).
	CallID string
	Tool   string
	Args   json.RawMessage
	// Call is the resolved call asking (Exec.Call), for its card; nil
	// when the asker should resolve it from Tool and Args.
	Call *Call
	// Text is the question, as the model wrote it (Markdown, one line or
	// more); never empty.
	Text string
	// Choices are the answers offered, in the model's order (trimmed,
	// non-empty, distinct); nil means a free-form answer.
	Choices []string
}

// The actions an Answer reports, mirroring ACP's elicitation actions:
// the user answered, refused to, or dismissed the question.
const (
	AnswerAccepted  = "accepted"
	AnswerDeclined  = "declined"
	AnswerCancelled = "cancelled"
)

// Answer is what the user did with a Question. Action is one of the
// Answer* constants; Text is the answer when Action is AnswerAccepted
// (one of the Choices, or free text); Via names the way the question was
// put ("elicitation", "permission"), for the logs and the card.
type Answer struct {
	Action string
	Text   string
	Via    string
}

// ErrNotAsked is what Asker.Ask returns when it cannot put the question
// to the user now (the editor offers no way that fits it): the ask_user
// tool then ends the turn with the question as the agent's message, and
// the user's next prompt is the answer.
var ErrNotAsked = errors.New("tools: the question cannot be asked in the editor")

// Asker puts the model's questions to the user; the bridge implements it
// per session, with whatever the editor offers (ACP elicitation, a
// permission request whose options are the choices). Ask blocks until the
// user answers or ctx ends (then it returns ctx's error). It returns
// ErrNotAsked, having asked nothing, when the question does not fit any
// way the editor offers, and another error when the editor failed.
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

type askerKey struct{}

// SetAsker makes a the session's asker (call it before any tool runs).
func SetAsker(s Session, a Asker) {
	s.Value(askerKey{}, func() any { return a })
}

// AskerOf returns the session's asker, or nil when there is none (or s
// is nil): questions then end the turn (ErrNotAsked).
func AskerOf(s Session) Asker {
	if s == nil {
		return nil
	}
	a, _ := s.Value(askerKey{}, nil).(Asker)
	return a
}
