package bridge

import (
	"context"
	"errors"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/session"
)

var (
	_ acp.SessionArchiver = (*Bridge)(nil)
	_ acp.SessionStatuser = (*Bridge)(nil)
)

// ArchiveSession implements acp.SessionArchiver (unstable schema): a
// session open here is closed first (its turn cancelled, its commands
// stopped, as session/close does), then its log gets the archive mark
// (session.SetArchived): the default session/list leaves it out, its log
// stays, session/load and session/resume still open it. Archiving an
// archived session succeeds. An id neither open nor logged is -32002;
// one being loaded, resumed or forked is -32602.
func (b *Bridge) ArchiveSession(_ context.Context, p acp.ArchiveSessionRequest) (acp.ArchiveSessionResponse, error) {
	if p.SessionID == "" {
		return acp.ArchiveSessionResponse{}, acp.InvalidParams("Invalid params: sessionId is required")
	}
	if !b.loads.claim(p.SessionID) {
		return acp.ArchiveSessionResponse{}, acp.InvalidParams("Invalid params: session %s is being opened or forked; archive it after that", p.SessionID)
	}
	defer b.loads.release(p.SessionID)
	s := b.detach(p.SessionID)
	if s != nil {
		b.releaseIfIdle(s)
	}
	return acp.ArchiveSessionResponse{}, b.markArchived(p.SessionID, true, s != nil)
}

// UnarchiveSession implements acp.SessionArchiver (unstable schema): the
// archive mark is removed, so the session is listed again; it is not
// opened. A session that is not archived succeeds; an unknown one is
// -32002.
func (b *Bridge) UnarchiveSession(_ context.Context, p acp.UnarchiveSessionRequest) (acp.UnarchiveSessionResponse, error) {
	if p.SessionID == "" {
		return acp.UnarchiveSessionResponse{}, acp.InvalidParams("Invalid params: sessionId is required")
	}
	open := b.session(p.SessionID) != nil
	return acp.UnarchiveSessionResponse{}, b.markArchived(p.SessionID, false, open)
}

// markArchived sets or removes the archive mark of session id's log. A
// session that has no log (no state directory) is fine when it was open
// here (wasOpen), else -32002.
func (b *Bridge) markArchived(id string, on, wasOpen bool) error {
	if b.cfg.StateDir == "" {
		if wasOpen {
			return nil
		}
		return unknownSession(id)
	}
	path, err := session.Find(b.cfg.StateDir, id)
	if err == nil {
		err = session.SetArchived(path, on)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, session.ErrNotFound) && wasOpen:
		return nil
	case errors.Is(err, session.ErrNotFound):
		return unknownSession(id)
	}
	return &acp.Error{Code: acp.CodeInternalError, Message: "Internal error: " + err.Error(), Data: map[string]any{"reason": "ARCHIVE_FAILED"}}
}

// SessionStatus implements acp.SessionStatuser (unstable schema): "open"
// for a session open here, "saved" for one only logged under the state
// directory (whether archived or open in another process: both can be
// loaded or resumed there), else -32002 with the id in data. It changes
// nothing and attaches nothing.
func (b *Bridge) SessionStatus(_ context.Context, p acp.SessionStatusRequest) (acp.SessionStatusResponse, error) {
	if p.SessionID == "" {
		return acp.SessionStatusResponse{}, acp.InvalidParams("Invalid params: sessionId is required")
	}
	open := b.session(p.SessionID) != nil
	if open {
		return acp.SessionStatusResponse{Status: acp.SessionOpen}, nil
	}
	if b.cfg.StateDir != "" {
		if _, err := session.Find(b.cfg.StateDir, p.SessionID); err == nil {
			return acp.SessionStatusResponse{Status: acp.SessionSaved}, nil
		}
	}
	return acp.SessionStatusResponse{}, unknownSession(p.SessionID)
}

// archiveFilter is the `archived` filter of session/list as a test of a
// listed session (one stat of its archive mark): the default (""), and
// "exclude", keep sessions not archived; "include" keeps all; "only"
// keeps the archived ones. Any other value is -32602, as the schema
// asks (never read as "exclude").
func archiveFilter(mode string) (func(session.Info) bool, error) {
	switch mode {
	case "", acp.ArchivedExclude:
		return func(in session.Info) bool { return !session.IsArchived(in.Path) }, nil
	case acp.ArchivedInclude:
		return nil, nil
	case acp.ArchivedOnly:
		return func(in session.Info) bool { return session.IsArchived(in.Path) }, nil
	}
	return nil, acp.InvalidParams("Invalid params: archived must be exclude, include or only, got %q", mode)
}

// filtered is list with only the sessions keep accepts (keep nil: list
// itself): it asks list for pages, in order, until n sessions are kept
// or list has no more.
func filtered(list lister, keep func(session.Info) bool) lister {
	if keep == nil {
		return list
	}
	return func(from func(session.Info) bool, n int) ([]session.Info, bool, error) {
		var out []session.Info
		for {
			page, more, err := list(from, n)
			if err != nil {
				return nil, false, err
			}
			for _, in := range page {
				if !keep(in) {
					continue
				}
				if len(out) == n {
					return out, true, nil
				}
				out = append(out, in)
			}
			if !more || len(page) == 0 {
				return out, false, nil
			}
			last := page[len(page)-1]
			from = func(in session.Info) bool { return after(in, last.UpdatedAt, last.ID) }
		}
	}
}
