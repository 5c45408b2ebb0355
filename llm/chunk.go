package llm

import (
	"encoding/json"
	"sort"
	"strings"
)

// wireChunk is the part of a chat.completion.chunk this package reads.
type wireChunk struct {
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Error   *wireError   `json:"error"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type wireDelta struct {
	Content          *string             `json:"content"`
	ReasoningContent *string             `json:"reasoning_content"`
	Reasoning        *string             `json:"reasoning"` // used by some OpenAI-compatible gateways
	ToolCalls        []wireToolCallDelta `json:"tool_calls"`
}

type wireToolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function *struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptCacheHit      int `json:"prompt_cache_hit_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (w *wireUsage) usage() *Usage {
	u := &Usage{
		PromptTokens:     w.PromptTokens,
		CompletionTokens: w.CompletionTokens,
		TotalTokens:      w.TotalTokens,
		CacheHitTokens:   w.PromptCacheHit,
	}
	if d := w.PromptTokensDetails; d != nil && d.CachedTokens != nil {
		u.CacheHitTokens = *d.CachedTokens
	}
	if d := w.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = d.ReasoningTokens
	}
	return u
}

// callState is one tool call being assembled.
type callState struct {
	index int
	id    string
	name  string
	args  strings.Builder
}

// assembler turns decoded chunks into deltas and a Response.
type assembler struct {
	onDelta   func(Delta)
	reasoning strings.Builder
	text      strings.Builder
	calls     []*callState // in order of first appearance
	finish    string
	usage     *Usage
}

func (a *assembler) emit(d Delta) {
	if a.onDelta != nil {
		a.onDelta(d)
	}
}

// add applies one chunk: reasoning first, then content, then tool calls, for
// choice 0; then the finish reason and usage (last non-empty value wins).
func (a *assembler) add(c *wireChunk) {
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		d := &ch.Delta
		r := d.ReasoningContent
		if r == nil {
			r = d.Reasoning
		}
		if r != nil && *r != "" {
			a.reasoning.WriteString(*r)
			a.emit(Delta{Kind: DeltaReasoning, Text: *r})
		}
		if d.Content != nil && *d.Content != "" {
			a.text.WriteString(*d.Content)
			a.emit(Delta{Kind: DeltaText, Text: *d.Content})
		}
		for j := range d.ToolCalls {
			a.addCall(&d.ToolCalls[j])
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
		}
	}
	if c.Usage != nil {
		a.usage = c.Usage.usage()
	}
}

// addCall applies one tool-call fragment. A fragment without an index starts
// a new call when it brings an id not seen yet, else continues the last call.
func (a *assembler) addCall(t *wireToolCallDelta) {
	var name, args string
	if t.Function != nil {
		name, args = t.Function.Name, t.Function.Arguments
	}
	var cs *callState
	if t.Index != nil {
		for _, c := range a.calls {
			if c.index == *t.Index {
				cs = c
				break
			}
		}
	} else if n := len(a.calls); n > 0 && (t.ID == "" || t.ID == a.calls[n-1].id) {
		cs = a.calls[n-1]
	}
	if cs == nil {
		idx := 0
		if t.Index != nil {
			idx = *t.Index
		} else {
			for _, c := range a.calls {
				idx = max(idx, c.index+1)
			}
		}
		cs = &callState{index: idx, id: t.ID, name: name}
		a.calls = append(a.calls, cs)
		a.emit(Delta{Kind: DeltaToolCall, Index: idx, ID: t.ID, Name: name})
	} else {
		if cs.id == "" {
			cs.id = t.ID
		}
		if cs.name == "" {
			cs.name = name
		}
	}
	if args != "" {
		cs.args.WriteString(args)
		a.emit(Delta{Kind: DeltaToolArgs, Index: cs.index, Text: args})
	}
}

// response returns the answer assembled so far.
func (a *assembler) response() *Response {
	r := &Response{
		Reasoning:    a.reasoning.String(),
		Text:         a.text.String(),
		FinishReason: a.finish,
		Usage:        a.usage,
	}
	if r.FinishReason == "" {
		r.FinishReason = "stop"
	}
	calls := append([]*callState(nil), a.calls...)
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].index < calls[j].index })
	for _, c := range calls {
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()})
	}
	return r
}

// decodeChunk parses one event payload. Anything but a JSON object is an error.
func decodeChunk(data []byte, c *wireChunk) error {
	*c = wireChunk{}
	for _, b := range data {
		if b == ' ' || b == '\t' || b == '\n' || b == '\r' {
			continue
		}
		if b != '{' {
			return errNotObject
		}
		break
	}
	return json.Unmarshal(data, c)
}
