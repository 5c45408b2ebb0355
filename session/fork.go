package session

import "strconv"

// UserMessageID is the ACP messageId of the user's prompt of turn
// ("turn3-user"): the user_message_chunks of a replay carry it.
func UserMessageID(turn int) string {
	return "turn" + strconv.Itoa(turn) + "-user"
}

// ID is the ACP messageId of m: UserMessageID of its turn for the
// turn's prompt, "turn3-user-steer1" for the first steering message the
// turn took (UserMessage.Steer).
func (m UserMessage) ID() string {
	if m.Steer > 0 {
		return UserMessageID(m.Turn) + "-steer" + strconv.Itoa(m.Steer)
	}
	return UserMessageID(m.Turn)
}

// AssistantMessageID is the ACP messageId of the model's message of one
// step of a turn ("turn3-step2"): its thought and text chunks carry it,
// live and on replay. Ids are unique within a session, and a fork keeps
// the ids of what it copied.
func AssistantMessageID(turn, step int) string {
	return "turn" + strconv.Itoa(turn) + "-step" + strconv.Itoa(step)
}

// ForkEvents returns the events a fork of a session with events starts
// from, and false when messageID names no message of events.
//
// With messageID "" it is every event up to the last closed turn (a turn
// still running is left out). With a messageID (UserMessageID or
// AssistantMessageID) it is every event up to and including that
// message: for the user's prompt, the prompt; for a model message, its
// whole step (the tool calls it asked for and their results) and, when
// that step ended the turn, the turn's end. A turn cut short is closed
// as crash repair closes one (a StepEnd when a step is open, then a
// TurnEnd), with reason EndForked. The events keep their Seq numbers;
// the closing ones continue them with the last event's Time.
func ForkEvents(events []Event, messageID string) ([]Event, bool) {
	if messageID == "" {
		return events[:settled(events):settled(events)], true
	}
	at := -1 // the index of the last event to keep
	for i, ev := range events {
		switch d := ev.Data.(type) {
		case UserMessage:
			if d.ID() == messageID {
				at = i
			}
		case AssistantMessage:
			if AssistantMessageID(d.Turn, d.Step) == messageID {
				at = stepEnd(events, i, d.Turn, d.Step)
			}
		default:
			// Only messages have message ids.
		}
		if at >= 0 {
			break
		}
	}
	if at < 0 {
		return nil, false
	}
	if at+1 < len(events) {
		if _, ok := events[at+1].Data.(TurnEnd); ok {
			at++
		}
	}
	out := events[: at+1 : at+1]
	turn, step, open, stepOpen := 0, 0, false, false
	for _, ev := range out {
		switch d := ev.Data.(type) {
		case TurnStart:
			turn, open, stepOpen = d.Turn, true, false
		case TurnEnd:
			open, stepOpen = false, false
		case StepStart:
			step, stepOpen = d.Step, true
		case StepEnd:
			stepOpen = false
		default:
			// Only turn and step bounds open or close anything.
		}
	}
	last := out[len(out)-1]
	add := func(d Data) {
		out = append(out, Event{Seq: int64(len(out)), Time: last.Time, Data: d})
	}
	if stepOpen {
		add(StepEnd{Turn: turn, Step: step})
	}
	if open {
		add(TurnEnd{Turn: turn, Reason: EndForked})
	}
	return out, true
}

// stepEnd returns the index of the StepEnd of (turn, step) at or after
// i, or the last index of that step when it has none.
func stepEnd(events []Event, i, turn, step int) int {
	for j := i + 1; j < len(events); j++ {
		switch d := events[j].Data.(type) {
		case StepEnd:
			if d.Turn == turn && d.Step == step {
				return j
			}
		case StepStart, TurnStart, TurnEnd:
			return j - 1
		default:
			// Events inside the step.
		}
	}
	return len(events) - 1
}

// settled returns how many of events precede a turn still running: all
// of them, or the index of the last turn's TurnStart when that turn has
// no TurnEnd.
func settled(events []Event) int {
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Data.(type) {
		case TurnEnd:
			return len(events)
		case TurnStart:
			return i
		default:
			// Only turn bounds tell whether a turn runs.
		}
	}
	return len(events)
}
