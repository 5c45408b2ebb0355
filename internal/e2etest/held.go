// This file builds responses a test writes part by part and holds between
// parts (HeldStream), and the live streams whose usage a test sets
// (LiveText, LiveToolCall).

package e2etest

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// HeldStream is one response in DeepSeek's exact stream format that a
// test writes out part by part, holding the stream between parts (a fake
// model that sends the rest of a call only once its card is shown, or
// never ends until the request is cancelled). Each method returns the
// `data: {...}` events it adds, to be written and flushed as they are;
// all of them together are a stream of the shape Text and ToolCallsAt
// write: the same chunk id, created, model and fingerprint throughout,
// the opening role chunk before the first piece, reasoning before the
// answer (the piece "I will use a tool." or "The answer is ready." when
// the answer begins without any), tool calls in turn from index 0 with
// ids CallID(step, index, name, arguments given to Call), and the usage,
// with the cache fields, on the closing chunk only (Done). The chunk id
// is derived from step alone, so two held streams of one step share it
// (nothing reads it). A method that would leave that shape (reasoning
// after the answer began, text after a call, arguments before a call,
// anything after Done, a finish reason that contradicts the answer)
// panics: it is a mistake in the test.
type HeldStream struct {
	s        *stream
	step     int
	opened   bool     // the opening role chunk is written
	answered bool     // the answer (text or a call) began
	ids      []string // the calls opened, by index
	done     bool
}

// NewHeldStream starts the step-th response (from 0) of a test's model;
// nothing is written until the first method.
func NewHeldStream(step int) *HeldStream {
	return &HeldStream{s: newStream([]string{"held", fmt.Sprint(step)}), step: step}
}

// Reasoning returns the events of the reasoning pieces given, one chunk
// each (empty pieces left out), after the opening chunk when they are the
// stream's first events.
func (h *HeldStream) Reasoning(parts ...string) string {
	h.check(!h.answered, "reasoning after the answer began")
	h.open()
	for _, p := range parts {
		h.s.reasoning(p)
	}
	return h.take()
}

// Text returns the events of the answer's text pieces, one chunk each
// (empty pieces left out).
func (h *HeldStream) Text(parts ...string) string {
	h.check(len(h.ids) == 0, "text after a tool call")
	h.answer(defaultReasoning)
	for _, p := range parts {
		h.s.text(p)
	}
	return h.take()
}

// Call returns the events that open the next tool call (index 0, 1, ...
// in turn): the first fragment with its index, id CallID(step, index,
// name, args), type and name with empty arguments, then args in pieces
// of size bytes cut at character boundaries (size <= 0: one character
// each). Args streams more of its arguments.
func (h *HeldStream) Call(name, args string, size int) string {
	h.answer("I will use a tool.")
	i := len(h.ids)
	h.ids = append(h.ids, CallID(h.step, i, name, args))
	h.s.call(i, h.ids[i], name)
	h.s.args(i, pieces(args, size)...)
	return h.take()
}

// Args returns the events of more arguments of the last call opened, in
// pieces of size bytes (see Call).
func (h *HeldStream) Args(args string, size int) string {
	h.check(len(h.ids) > 0, "arguments before a tool call")
	h.s.args(len(h.ids)-1, pieces(args, size)...)
	return h.take()
}

// Done returns the closing chunk, with finish_reason finish ("tool_calls"
// after a call, else "stop", "length", ...) and the usage (made up from
// the lengths of the pieces, as Text's), then `data: [DONE]`.
func (h *HeldStream) Done(finish string) string {
	h.check(h.answered, "the stream ends before its answer")
	h.check((finish == "tool_calls") == (len(h.ids) > 0), "finish_reason "+finish+" contradicts the answer")
	h.done = true
	return h.s.close(finish)
}

// CallID is the id of the index-th call (from 0) Call opened; it panics
// when there is none.
func (h *HeldStream) CallID(index int) string { return h.ids[index] }

// check panics with what when ok does not hold, and after Done whatever
// ok is.
func (h *HeldStream) check(ok bool, what string) {
	if h.done {
		ok, what = false, "events after Done"
	}
	if !ok {
		panic("e2etest.HeldStream: " + what + " (not DeepSeek's stream shape)")
	}
}

func (h *HeldStream) open() {
	if !h.opened {
		h.s.open()
		h.opened = true
	}
}

// answer begins the answer, with the reasoning piece def if the stream
// has none yet.
func (h *HeldStream) answer(def string) {
	h.check(true, "")
	h.open()
	if h.s.reason == 0 {
		h.s.reasoning(def)
	}
	h.answered = true
}

// take returns the events written since the last take.
func (h *HeldStream) take() string {
	out := h.s.b.String()
	h.s.b.Reset()
	return out
}

// LiveUsage is a usage block a test chooses (LiveText, LiveToolCall),
// for the figures that matter to it (a context past a threshold, a
// price): Prompt tokens, CacheHit of them from the context cache (a
// multiple of 64, as DeepSeek counts), Completion tokens, Reasoning of
// them spent on reasoning.
type LiveUsage struct {
	Prompt, Completion, CacheHit, Reasoning int
}

// closeWith writes the closing chunk with the usage u, and `data: [DONE]`,
// and returns what the stream holds: the usage, with the cache fields, is
// on the closing chunk only.
func (s *stream) closeWith(finish string, u LiveUsage) string {
	usage := fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d},`+
		`"completion_tokens_details":{"reasoning_tokens":%d},"prompt_cache_hit_tokens":%d,"prompt_cache_miss_tokens":%d}`,
		u.Prompt, u.Completion, u.Prompt+u.Completion, u.CacheHit, u.Reasoning, u.CacheHit, u.Prompt-u.CacheHit)
	s.chunk(`{"content":"","reasoning_content":null}`, quote(finish), usage)
	s.b.WriteString("data: [DONE]\n\n")
	return s.b.String()
}

// LiveText is Text (finish_reason "stop") with the usage u instead of
// the made-up one.
func LiveText(reasoning, text []string, u LiveUsage) string {
	if strings.Join(reasoning, "") == "" {
		reasoning = []string{defaultReasoning}
	}
	s := newStream(append(append([]string{"live", fmt.Sprint(u)}, reasoning...), text...))
	s.open()
	for _, r := range reasoning {
		s.reasoning(r)
	}
	for _, t := range text {
		s.text(t)
	}
	return s.closeWith("stop", u)
}

// LiveToolCall is the step-th response (from 0) of a recording calling
// one tool: the opening chunk, the reasoning pieces given (none gives
// "I will use a tool."), the call's first fragment (index 0, id, type,
// name, empty arguments), the arguments in pieces of 8 bytes or a little
// more (cut at character boundaries, as a live stream cuts them), and
// the closing chunk with finish_reason "tool_calls" and the usage u. The
// call's id is CallID(step, 0, name, args).
func LiveToolCall(reasoning []string, step int, name, args string, u LiveUsage) string {
	if strings.Join(reasoning, "") == "" {
		reasoning = []string{"I will use a tool."}
	}
	s := newStream(append([]string{"live tool", fmt.Sprint(step, u), name, args}, reasoning...))
	s.open()
	for _, r := range reasoning {
		s.reasoning(r)
	}
	s.call(0, CallID(step, 0, name, args), name)
	for len(args) > 0 {
		k := min(8, len(args))
		for k < len(args) && !utf8.RuneStart(args[k]) {
			k++
		}
		s.args(0, args[:k])
		args = args[k:]
	}
	return s.closeWith("tool_calls", u)
}
