// Package session holds the typed events a prompt turn produces. The
// agent loop reports everything that happens as events to one sink; the
// bridge turns each into zero or more ACP `session/update`s with one
// function, live and (once sessions are logged) on `session/load`
// replay. Events are plain JSON-serialisable values: an [Event] is
// `{"type", "seq", "time", "data"}` with time in Unix milliseconds.
package session

import (
	"encoding/json"

	"github.com/dsh-acp/dsh-acp/tools"
)

// Data is the payload of one event. EventType names it on the wire
// (e.g. "turn/start"); Transient reports whether it only serves live
// streaming and is never logged (chunks, progress, early tool cards).
//
// The set is closed (sealed by isData): the types of this file and
// Subagent, always used as values, one per event type.
type Data interface {
	EventType() string
	Transient() bool
	isData()
}

// Event is one thing that happened in a session. Seq counts the session's
// logged events from 0; Time is Unix milliseconds.
type Event struct {
	Seq  int64
	Time int64
	Data Data
}

// TurnStart opens a prompt turn. Turn counts from 1.
type TurnStart struct {
	Turn int `json:"turn"`
}

// Turn end reasons: the ACP stop reasons, plus "error" (the prompt failed),
// "interrupted" (closed by crash repair) and "forked" (a fork's copy of
// the turn stops at the message it was forked at).
const (
	EndTurn         = "end_turn"
	EndMaxTokens    = "max_tokens"
	EndMaxTurnReqs  = "max_turn_requests"
	EndCancelled    = "cancelled"
	EndError        = "error"
	EndInterrupted  = "interrupted"
	EndForked       = "forked"
	EndContentFiltr = "content_filter"
)

// TurnEnd closes a prompt turn with its reason; Message and Code describe
// an error.
type TurnEnd struct {
	Turn    int    `json:"turn"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	Code    string `json:"code,omitempty"`
	// Usage is the turn's model requests' usage summed (the steps and
	// a compaction the turn ran); nil when none reported usage.
	Usage *Usage `json:"usage,omitempty"`
}

// StepStart opens one model request of a turn. Step counts from 1.
type StepStart struct {
	Turn int `json:"turn"`
	Step int `json:"step"`
}

// StepEnd closes one model request and the tool calls it asked for.
type StepEnd struct {
	Turn int `json:"turn"`
	Step int `json:"step"`
}

// UserMessage is the user's prompt as the model receives it. Typed,
// when set, is the prompt as the user wrote it, when that differs from
// Content (a slash command, e.g. "/review", expanded into its prompt):
// a replay shows Typed. Local marks a prompt the agent served itself
// (e.g. "/compact"): it is never sent to the model.
type UserMessage struct {
	Turn    int             `json:"turn"`
	Content []tools.Content `json:"content"`
	Typed   []tools.Content `json:"typed,omitempty"`
	Local   bool            `json:"local,omitempty"`
	// Steer, from 1, numbers a message the user sent into the running
	// turn (a steering prompt, logged where the turn took it: after a
	// step's tool results); 0 for the prompt that started the turn.
	Steer int `json:"steer,omitempty"`
}

// Shown is the prompt as the user wrote it: Typed when set, else
// Content.
func (m UserMessage) Shown() []tools.Content {
	if m.Typed != nil {
		return m.Typed
	}
	return m.Content
}

// Chunk kinds.
const (
	ChunkText      = "text"
	ChunkReasoning = "reasoning"
)

// AssistantChunk is one streamed piece of the model's answer (Kind
// ChunkText) or reasoning (ChunkReasoning). Transient: the whole text is
// kept in [AssistantMessage].
type AssistantChunk struct {
	Turn int    `json:"turn"`
	Step int    `json:"step"`
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// ToolCallRef is one tool call the model made: its id (as used towards
// the model and the editor), the tool name and the raw arguments text.
// Call, in memory only, is the call resolved once when its arguments
// were complete (nil on replay, and for a call cut off while it
// streamed).
type ToolCallRef struct {
	CallID    string      `json:"callId"`
	Name      string      `json:"name"`
	Arguments string      `json:"arguments"`
	Call      *tools.Call `json:"-"`
}

// Usage is the model's token accounting for one request.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	CacheHitTokens   int `json:"cacheHitTokens,omitempty"`
	ReasoningTokens  int `json:"reasoningTokens,omitempty"`
}

// AssistantMessage is the model's complete message of one step: the text,
// the reasoning, the tool calls it asked for (complete ones only) and the
// finish reason as the endpoint sent it.
type AssistantMessage struct {
	Turn         int           `json:"turn"`
	Step         int           `json:"step"`
	Text         string        `json:"text,omitempty"`
	Reasoning    string        `json:"reasoning,omitempty"`
	ToolCalls    []ToolCallRef `json:"toolCalls,omitempty"`
	FinishReason string        `json:"finishReason,omitempty"`
	Usage        *Usage        `json:"usage,omitempty"`
}

// ToolStart says the model stream began a tool call (its name is known,
// its arguments are still streaming). Transient. Pending, in memory
// only, is the call's tool as looked up once when the model named it
// (the start card reads it instead of looking the tool up again).
type ToolStart struct {
	Turn    int            `json:"turn"`
	Step    int            `json:"step"`
	CallID  string         `json:"callId"`
	Name    string         `json:"name"`
	Pending *tools.Pending `json:"-"`
}

// ToolInput says more of a streaming tool call's arguments is known.
// Arguments is, while Complete is false, a JSON object of the top-level
// members complete so far (tools.ArgsScanner; long members left out),
// and when Complete, the whole arguments text as streamed up to the
// closing brace. Transient: the card it announces early is rebuilt on
// replay from the logged ToolCall, which carries everything it showed.
//
// Call, in memory only, is the call resolved from the complete
// arguments (set when Complete), which the cards read instead of
// decoding the arguments again.
type ToolInput struct {
	Turn      int         `json:"turn"`
	Step      int         `json:"step"`
	CallID    string      `json:"callId"`
	Arguments string      `json:"arguments"`
	Complete  bool        `json:"complete,omitempty"`
	Call      *tools.Call `json:"-"`
}

// ToolCall says a tool call's arguments are final: it runs next, unless
// the turn ended first; a call that never ran (cancelled before its
// turn, or cut off while it streamed, then with the arguments streamed so
// far) still gets its ToolCall, then its ToolResult with NotRun, so a
// replay shows what the model asked for. Call, in memory only, is the
// call resolved once (nil on replay and for a call cut off while it
// streamed: the presenter then resolves it from the logged arguments).
type ToolCall struct {
	Turn      int         `json:"turn"`
	Step      int         `json:"step"`
	CallID    string      `json:"callId"`
	Name      string      `json:"name"`
	Arguments string      `json:"arguments"`
	Call      *tools.Call `json:"-"`
}

// ToolPreview is what a tool call would change, computed against the
// current files just before it runs (the tool's Preview; the hunks of a
// write or edit). Transient: the result shows what was applied, and a
// card that never ran falls back to its call card, which replay can
// rebuild.
type ToolPreview struct {
	CallID  string         `json:"callId"`
	Preview tools.DiffCall `json:"preview"`
}

// ToolExec says a tool call started executing. Transient.
type ToolExec struct {
	CallID string `json:"callId"`
}

// ToolProgress carries partial output of a running tool (live terminal
// output). Transient: only the final result is logged.
type ToolProgress struct {
	CallID   string         `json:"callId"`
	Progress tools.Progress `json:"progress"`
}

// ToolResult is a tool call's final result. Cancelled marks a call ended
// by the user's cancel (its card fails with "Cancelled by the user.");
// NotRun a call that never started (cancelled, or cut off, before it
// ran: a terminal card then ends without a signal).
// SourceEventSeqs, set on the results crash repair adds, holds the Seq of
// the event that announced the call.
type ToolResult struct {
	Turn            int              `json:"turn"`
	Step            int              `json:"step"`
	CallID          string           `json:"callId"`
	Content         []tools.Content  `json:"content"`
	IsError         bool             `json:"isError"`
	Error           *tools.ErrorInfo `json:"error,omitempty"`
	Meta            json.RawMessage  `json:"meta,omitempty"`
	Cancelled       bool             `json:"cancelled,omitempty"`
	NotRun          bool             `json:"notRun,omitempty"`
	SourceEventSeqs []int64          `json:"sourceEventSeqs,omitempty"`
	// Charge is what the call cost (a billed API request), added to the
	// session's cost by the next ContextUsage; nil for a free call.
	Charge *tools.Charge `json:"charge,omitempty"`
	// View, in memory only, is the result card the tool built
	// (tools.Output.View); the presenter rebuilds it from Meta when it
	// is nil (replay).
	View tools.ToolResultView `json:"-"`
}

// Plan is a todo list snapshot written by a tool while it runs.
type Plan struct {
	CallID  string            `json:"callId,omitempty"`
	Entries []tools.PlanEntry `json:"entries"`
}

// Where a Title comes from (Title.Source).
const (
	// TitleFromPrompt: the first prompt's first line ("" on the wire,
	// as in logs written before titles had a source).
	TitleFromPrompt = ""
	// TitleFromModel: written by the model after the first turn.
	TitleFromModel = "model"
	// TitleFromUser: set by the user (session/set_title); it is never
	// replaced by a title the agent makes.
	TitleFromUser = "user"
)

// Title names the session. The last Title of a log is the session's
// title. Source says who wrote it (TitleFrom*).
type Title struct {
	Title  string `json:"title"`
	Source string `json:"source,omitempty"`
}

// ContextMessage is text the agent adds to the conversation for the model
// (e.g. a background task finished); the model sees it as a user message.
type ContextMessage struct {
	Turn int    `json:"turn"`
	Text string `json:"text"`
}

// ModeChange records a switch of the session mode.
type ModeChange struct {
	ModeID string `json:"modeId"`
}

// PermissionRule records an "always" answer to a permission request
// (allow_always: Allow true; reject_always: false), as the permission
// memory stored it, so session/load restores it: Tool is the tool's
// name; Paths are resolved absolute paths remembered for that tool;
// Prefixes are shell command prefixes ("git status"); Hosts are network
// hosts remembered for that tool; Whole means the answer covers the tool
// itself.
type PermissionRule struct {
	Tool     string   `json:"tool"`
	Allow    bool     `json:"allow"`
	Paths    []string `json:"paths,omitempty"`
	Prefixes []string `json:"prefixes,omitempty"`
	Hosts    []string `json:"hosts,omitempty"`
	Whole    bool     `json:"whole,omitempty"`
}

// Directories records the session's additional workspace roots (ACP
// additionalDirectories: absolute directories, in the editor's order)
// from this event on, when `session/load`, `session/resume` or
// `session/fork` set a list other than the one in force (the header's,
// or the last Directories event's). Dirs is never nil on the wire: an
// empty list says the session has none any more.
type Directories struct {
	Dirs []string `json:"additionalDirectories"`
}

// The statuses a Compaction ends with (ACP CompactionStatus).
const (
	CompactionCompleted = "completed"
	CompactionFailed    = "failed"
	CompactionCancelled = "cancelled"
)

// Compaction is a finished context compaction: the model summarized the
// conversation so far, and from this event on the model's requests
// carry Summary instead of every message logged before Before (a Seq:
// the summary stands for the events with a smaller Seq; the log keeps
// them). Only a Status CompactionCompleted compaction changes what the
// model sees; a failed or cancelled one (Error says why) leaves the
// history as it was, and its Summary holds what had streamed. ID is
// unique in the session (the ACP compactionId); Auto marks one the
// context's fill started (else the user's /compact, with its Focus);
// Usage is the summary request's.
type Compaction struct {
	ID      string `json:"compactionId"`
	Turn    int    `json:"turn"`
	Status  string `json:"status"`
	Before  int64  `json:"before"`
	Summary string `json:"summary,omitempty"`
	Auto    bool   `json:"auto,omitempty"`
	Focus   string `json:"focus,omitempty"`
	Error   string `json:"error,omitempty"`
	Usage   *Usage `json:"usage,omitempty"`
}

// CompactionStart says a compaction began (its summary request is under
// way). Transient: the Compaction event that ends it holds everything a
// replay shows.
type CompactionStart struct {
	ID   string `json:"compactionId"`
	Turn int    `json:"turn"`
	Auto bool   `json:"auto,omitempty"`
}

// CompactionChunk is one streamed piece of a compaction's summary.
// Transient.
type CompactionChunk struct {
	ID   string `json:"compactionId"`
	Text string `json:"text"`
}

// Notice is something the user should know but the model need not (a
// retried model request, an unavailable sandbox, ...), with an ACP
// NoticeSeverity. Transient: notices are live only, never logged nor
// replayed.
type Notice struct {
	Severity    string `json:"severity"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// ConfigChange records a new value of a session config option other than
// the mode (which is a ModeChange): ConfigID is the option's id (e.g.
// "model", "thinking"), Value the chosen value's id.
type ConfigChange struct {
	ConfigID string `json:"configId"`
	Value    string `json:"value"`
}

// SystemPrompt records the editor's system prompt for the session (ACP
// systemPrompt, given on session/new, load, resume or fork): Mode is
// "append" or "override", Text its text. The last one logged is in
// force; load and resume restore it, a fork copies it with the log.
type SystemPrompt struct {
	Mode string `json:"mode"`
	Text string `json:"text"`
}

// Cost is an amount of money: Amount in Currency (ISO 4217, e.g. "USD").
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// ContextUsage is the context window's fill after one model response
// (ACP usage_update): Used is the tokens in the context now (that
// request's prompt plus completion tokens), Size the model's context
// window, both tokens; Cost, when known, is the session's cumulative cost
// up to and including this response (and the billed tool calls before
// it). Model is the model that answered.
type ContextUsage struct {
	Turn  int          `json:"turn"`
	Step  int          `json:"step"`
	Model string       `json:"model,omitempty"`
	Used  int64        `json:"used"`
	Size  int64        `json:"size"`
	Cost  *Cost        `json:"cost,omitempty"`
	Cache *CacheTokens `json:"cache,omitempty"`
	// Calls counts the turn's billed tool calls so far by charge kind
	// (tools.Charge.Kind, e.g. {"search": 2, "fetch": 1}); their prices
	// are in Cost. Nil when the turn made none.
	Calls map[string]int `json:"calls,omitempty"`
}

// CacheTokens are prompt tokens and how many of them the endpoint served
// from its context cache (billed at the cache-hit price): over the
// turn's responses so far (TurnPrompt, TurnHit) and over the session's
// (SessionPrompt, SessionHit), up to and including one response.
type CacheTokens struct {
	TurnPrompt    int64 `json:"turnPrompt"`
	TurnHit       int64 `json:"turnHit"`
	SessionPrompt int64 `json:"sessionPrompt"`
	SessionHit    int64 `json:"sessionHit"`
}

// Ratio is hit / prompt, 0 without prompt tokens.
func Ratio(hit, prompt int64) float64 {
	if prompt <= 0 {
		return 0
	}
	return float64(hit) / float64(prompt)
}

// ToolDefinition records, beside one call (CallID) of a tool that exists
// only for this session (an MCP server's tool, named Name), what the
// call's cards are built from, so that session/load shows them again
// without the tool: Source names the package that reads Definition back
// ("mcp": package toolmcp), Definition is that package's opaque JSON.
// It is logged when the call enters the execute chain, after its
// ToolCall.
type ToolDefinition struct {
	CallID     string          `json:"callId"`
	Name       string          `json:"name"`
	Source     string          `json:"source"`
	Definition json.RawMessage `json:"definition"`
}
