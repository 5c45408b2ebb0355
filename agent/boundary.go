package agent

import (
	"github.com/dsh-acp/dsh-acp/session"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Boundary is what the caller of a turn tells it at a step boundary:
// after a step's tool calls have all finished (none is cancelled for
// it), or when the model has given its final answer.
type Boundary struct {
	// Steer are the user's messages to add to the turn now, in order:
	// each is logged as a UserMessage of the turn (its Steer counting
	// from 1) after the step's tool results, so the next model request
	// carries them. After a final answer they make the turn ask the
	// model once more.
	Steer [][]tools.Content
	// End ends the turn here with end_turn instead of asking the model
	// again (a prompt waits behind it). It is not read after a final
	// answer (the turn ends then anyway).
	End bool
}

// boundary asks the turn's caller at a step boundary (final: the model
// gave its final answer) and logs the steering messages it hands over.
// It reports whether the turn ends here: with final, when no steering
// message came; else when the caller asked for End.
func (t *turnRun) boundary(final bool) bool {
	if t.atBoundary == nil {
		return final
	}
	b := t.atBoundary(final)
	for _, content := range b.Steer {
		t.steered++
		t.emit(session.UserMessage{Turn: t.turn, Content: content, Steer: t.steered})
	}
	if final {
		return len(b.Steer) == 0
	}
	return b.End
}
