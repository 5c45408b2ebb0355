package session

// Subagent is one logged event of a child session (a subagent), kept in
// the log of the session at the top in the order it happened, so that a
// load replays parent and children together. Child is the child's
// session id; exactly one of Start (the child was started), Event (one
// of its logged events, with its own Seq in the child) and End (it
// ended) is set. A child with a Start and no End was cut off (the agent
// stopped while it ran).
type Subagent struct {
	Child string         `json:"child"`
	Start *SubagentStart `json:"start,omitempty"`
	Event *Event         `json:"event,omitempty"`
	End   *SubagentEnd   `json:"end,omitempty"`
}

// SubagentStart is how a child was started: Parent is the session whose
// call (CallID) started it; Title, Description and Cwd are what the
// editor was told of it.
type SubagentStart struct {
	Parent      string `json:"parent"`
	CallID      string `json:"callId"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Cwd         string `json:"cwd,omitempty"`
}

// SubagentEnd is how a child's turn ended: StopReason is an ACP stop
// reason or EndError; Usage sums its responses' tokens (nil when none
// reported usage).
type SubagentEnd struct {
	StopReason string `json:"stopReason"`
	Usage      *Usage `json:"usage,omitempty"`
}

// EventType implements Data.
func (Subagent) EventType() string { return "subagent/event" }

// Transient implements Data.
func (Subagent) Transient() bool { return false }
func (Subagent) isData()         {}
