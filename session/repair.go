package session

import (
	"github.com/dsh-acp/dsh-acp/tools"
)

// InterruptedText is the result text of a tool call left unanswered by a
// crash; the result's error is {InterruptedError, interrupted}.
const InterruptedText = "Tool call interrupted by a crash; no result was recorded."

// Names of the synthetic error of an interrupted tool call.
const (
	InterruptedName = "InterruptedError"
	InterruptedCode = "interrupted"
)

// Repair closes an open final turn, the state a crash leaves behind: it
// returns events followed by, in this order, an error ToolResult
// (InterruptedText) for every tool call of that turn still unanswered
// (announced by a ToolCall event or listed in an AssistantMessage, in
// order of appearance, SourceEventSeqs pointing at the ToolCall event,
// else at the AssistantMessage), a StepEnd when a step is open, and a TurnEnd with reason
// EndInterrupted. The new events continue the Seq numbering and carry
// the last event's Time. Without an open turn events is returned as is.
func Repair(events []Event) []Event {
	start := -1 // index of the open turn's TurnStart
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Data.(type) {
		case TurnEnd:
			return events
		case TurnStart:
			start = i
		default:
			// Only turn bounds matter while looking for the open turn.
		}
		if start >= 0 {
			break
		}
	}
	if start < 0 {
		return events
	}
	turn := events[start].Data.(TurnStart).Turn
	type pending struct {
		id   string
		step int
		seq  int64
	}
	var calls []pending
	index, answered := map[string]int{}, map[string]bool{}
	step, stepOpen := 0, false
	// note records a call; its ToolCall event, when there is one, is the
	// announcing event.
	note := func(id string, st int, seq int64, isCall bool) {
		i, ok := index[id]
		if !ok {
			index[id] = len(calls)
			calls = append(calls, pending{id, st, seq})
		} else if isCall {
			calls[i].seq = seq
		}
	}
	for _, ev := range events[start+1:] {
		switch d := ev.Data.(type) {
		case StepStart:
			step, stepOpen = d.Step, true
		case StepEnd:
			stepOpen = false
		case AssistantMessage:
			for _, c := range d.ToolCalls {
				note(c.CallID, d.Step, ev.Seq, false)
			}
		case ToolCall:
			note(d.CallID, d.Step, ev.Seq, true)
		case ToolResult:
			answered[d.CallID] = true
		default:
			// The other events open or answer no call and no step.
		}
	}
	last := events[len(events)-1]
	out := events[:len(events):len(events)]
	add := func(d Data) {
		out = append(out, Event{Seq: int64(len(out)), Time: last.Time, Data: d})
	}
	for _, c := range calls {
		if answered[c.id] {
			continue
		}
		add(ToolResult{Turn: turn, Step: c.step, CallID: c.id, IsError: true,
			Content:         []tools.Content{tools.Text(InterruptedText)},
			Error:           &tools.ErrorInfo{Name: InterruptedName, Code: InterruptedCode},
			SourceEventSeqs: []int64{c.seq}})
	}
	if stepOpen {
		add(StepEnd{Turn: turn, Step: step})
	}
	add(TurnEnd{Turn: turn, Reason: EndInterrupted})
	return out
}
