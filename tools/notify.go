package tools

// The severities of a user notice (ACP NoticeSeverity; other values are
// allowed, "_"-prefixed ones for extensions).
const (
	NoticeInfo    = "info"
	NoticeWarning = "warning"
	NoticeError   = "error"
)

// Notice is something the user should know that the model need not: a
// model request being retried, the sandbox being unavailable, a command
// cut at the output cap, a compaction that failed, an MCP server that
// failed. It is not part of the conversation: the bridge sends it as an
// ACP `notice` update to an editor that advertised `session.notices`
// and logs it otherwise (never text in the conversation, never
// replayed). Title is required, one plain-text line that stands alone;
// Description is optional plain-text detail or guidance.
//
// Not to be confused with PostNotice, which queues text for the model.
type Notice struct {
	Severity    string
	Title       string
	Description string
}

type notifierKey struct{}

// SetNotifier makes f the session's notice path (the bridge sets it when
// it opens the session, before any tool runs). f must not block for long;
// it may be called from any goroutine.
func SetNotifier(s Session, f func(Notice)) {
	if s == nil || f == nil {
		return
	}
	s.Value(notifierKey{}, func() any { return f })
}

// Notify passes n to the session's notice path (SetNotifier); a session
// without one (as in tool tests) drops it. An empty Severity is
// NoticeInfo, and an empty Title is replaced by the Severity.
func Notify(s Session, n Notice) {
	if s == nil {
		return
	}
	f, ok := s.Value(notifierKey{}, nil).(func(Notice))
	if !ok {
		return
	}
	if n.Severity == "" {
		n.Severity = NoticeInfo
	}
	if n.Title == "" {
		n.Title = n.Severity
	}
	f(n)
}
