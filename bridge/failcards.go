package bridge

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/tools"
)

// failureCards carries a session's failures (an MCP server that does not
// start or dies, the sandbox unavailable when asked for: the warning and
// error notices) to an editor without `session.notices`, which would
// otherwise show nothing, as failed tool cards: kind other, the notice's
// title (naming the server) as the card's, its description as the text.
// A card can only be shown inside a prompt turn (between turns an editor
// has nowhere to put it), so a failure outside one waits for the next
// turn's start; each cause (title) is shown once per session. The cards
// are not logged: like notices, they are not history.
type failureCards struct {
	mu      sync.Mutex
	shown   map[string]bool // the causes already carded or queued
	pending []tools.Notice  // failures that came between turns
	inTurn  bool
}

// noSandboxTitle is the title of the notice that shell commands run
// unconfined though the sandbox was asked for.
const noSandboxTitle = "Shell commands run without a sandbox"

// sessionFailure reports whether notice n tells of a failure of the
// session itself that the user must know: an MCP server's (mcpNotice)
// or the sandbox's. Other warnings (a retried request, a failed
// compaction) happen inside a turn the editor shows anyway.
func sessionFailure(n tools.Notice) bool {
	return n.Severity != tools.NoticeInfo && (strings.HasPrefix(n.Title, "MCP server ") || n.Title == noSandboxTitle)
}

// add takes failure n and reports whether to show it now (a turn is
// running); false when its cause was seen before or it waits for a turn.
func (f *failureCards) add(n tools.Notice) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shown[n.Title] {
		return false
	}
	if f.shown == nil {
		f.shown = map[string]bool{}
	}
	f.shown[n.Title] = true
	if f.inTurn {
		return true
	}
	f.pending = append(f.pending, n)
	return false
}

// begin marks a turn started and returns the failures that waited for it.
func (f *failureCards) begin() []tools.Notice {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inTurn = true
	p := f.pending
	f.pending = nil
	return p
}

// end marks the turn over.
func (f *failureCards) end() {
	f.mu.Lock()
	f.inTurn = false
	f.mu.Unlock()
}

// failureCard sends the failed card of failure n in session s.
func (b *Bridge) failureCard(s *liveSession, n tools.Notice) {
	var r [12]byte
	_, _ = rand.Read(r[:])
	card := acp.ToolCall{ToolCallID: "call_" + hex.EncodeToString(r[:]), Title: n.Title, Kind: acp.ToolKind(tools.KindOther),
		Status: acp.StatusFailed}
	if n.Description != "" {
		card.Content = []acp.ToolCallContent{acp.TextContent(n.Description)}
	}
	b.sendUpdate(s, card)
}

// turnFailures shows, at the start of s's turn, the failures that came
// while no turn ran (editors without notices only); s.fails.end ends
// the turn.
func (b *Bridge) turnFailures(s *liveSession) {
	for _, n := range s.fails.begin() {
		b.failureCard(s, n)
	}
}
