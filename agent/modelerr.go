package agent

import (
	"errors"
	"fmt"

	"github.com/dsh-acp/dsh-acp/llm"
)

// ReasonModelNotFound is the TurnError.Reason of a turn whose model the
// endpoint does not know (llm.IsModelNotFound).
const ReasonModelNotFound = "MODEL_NOT_FOUND"

// stepError is the TurnError of a failed model request for model: the
// endpoint's refusal of the model name says which model and where to
// pick another (the session's Model selector, --model); every other
// failure is modelError's.
func stepError(err error, model string) error {
	if !llm.IsModelNotFound(err) {
		return modelError(err)
	}
	te := modelError(err).(*TurnError)
	te.Reason = ReasonModelNotFound
	var le *llm.Error
	msg := err.Error()
	if errors.As(err, &le) {
		msg = le.Message
	}
	te.Message = fmt.Sprintf("The model endpoint does not know the model %q (HTTP %d: %s); choose another in the session's Model selector, or start the agent with --model NAME (DSH_MODEL).", model, te.Status, msg)
	return te
}
