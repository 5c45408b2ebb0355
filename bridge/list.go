package bridge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/present"
	"github.com/dsh-acp/dsh-acp/session"
)

// listPageSize is how many sessions one `session/list` answer holds.
const listPageSize = 50

// ListSessions implements acp.SessionLister: the sessions logged under
// the state directory (those of `cwd` when given), newest first, with
// their titles, the time of their last activity and the additional
// directories they were created with, one page per call; archived ones
// only as the `archived` filter asks (archiveFilter).
// Each call lists the directory as it is then, reading only the logs
// that changed since the last call (session.Index), so paging reads each
// log once.
func (b *Bridge) ListSessions(_ context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	cwd := ""
	if p.Cwd != "" {
		if !filepath.IsAbs(p.Cwd) {
			return acp.ListSessionsResponse{}, acp.InvalidParams("Invalid params: cwd must be an absolute path: %q", p.Cwd)
		}
		cwd = filepath.Clean(p.Cwd)
	}
	keep, err := archiveFilter(p.Archived)
	if err != nil {
		return acp.ListSessionsResponse{}, err
	}
	list := lister(noSessions)
	if b.cfg.StateDir != "" {
		list = func(after func(session.Info) bool, n int) ([]session.Info, bool, error) {
			page, more, err := b.index.Page(b.cfg.StateDir, cwd, after, n)
			if err != nil {
				return nil, false, &acp.Error{Code: acp.CodeInternalError, Message: "Internal error: " + err.Error(), Data: map[string]any{"reason": "STATE_DIR_UNREADABLE"}}
			}
			return page, more, nil
		}
	}
	page, next, err := pageSessions(filtered(list, keep), p.Cursor, listPageSize)
	if err != nil {
		return acp.ListSessionsResponse{}, err
	}
	out := acp.ListSessionsResponse{Sessions: make([]acp.SessionInfo, 0, len(page)), NextCursor: next}
	for _, in := range page {
		out.Sessions = append(out.Sessions, acp.SessionInfo{SessionID: in.ID, Cwd: in.Cwd, AdditionalDirectories: in.AdditionalDirectories, Title: in.Title,
			UpdatedAt: time.UnixMilli(in.UpdatedAt).UTC().Format("2006-01-02T15:04:05.000Z"), Meta: usageMeta(b.index.LastUsage(in.Path)),
			Archived: p.Archived != "" && p.Archived != acp.ArchivedExclude && session.IsArchived(in.Path)})
	}
	return out, nil
}

// usageMeta is a listed session's `_meta`: `{"usage": {"used", "size",
// "cost"?, "cacheHitRatio"?, "cacheHitTokens"?, "promptTokens"?}}`, the
// figures of its last usage_update u (cost is the thread's running
// total, left out when unknown; the cache figures are the session's so
// far), or nil when its log has none (!ok; session.Index.LastUsage: the
// list index's copy, or the end of the log).
func usageMeta(u session.ContextUsage, ok bool) acp.Meta {
	if !ok {
		return nil
	}
	type usage struct {
		Used uint64    `json:"used"`
		Size uint64    `json:"size"`
		Cost *acp.Cost `json:"cost,omitempty"`
		// The session's prompt tokens served from the cache so far.
		*present.CacheFields
	}
	v := usage{Used: uint64(max(u.Used, 0)), Size: uint64(max(u.Size, 0)), CacheFields: present.SessionCache(u.Cache)}
	if u.Cost != nil {
		v.Cost = &acp.Cost{Amount: u.Cost.Amount, Currency: u.Cost.Currency}
	}
	b, err := json.Marshal(map[string]usage{"usage": v})
	if err != nil {
		return nil
	}
	return b
}

// lister returns at most n sessions that come after a position in the
// list order (newest first, then by id, as session.List returns them; a
// nil after means from the start) and whether more follow:
// session.Index.Page.
type lister func(after func(session.Info) bool, n int) ([]session.Info, bool, error)

// noSessions is the lister of an agent without a state directory.
func noSessions(func(session.Info) bool, int) ([]session.Info, bool, error) { return nil, false, nil }

// pageSessions returns the page of list that follows cursor ("" for the
// first page), at most n long, and the cursor of the next page ("" when
// this is the last). The cursor names the last session shown (its
// updatedAt and id), so sessions that change between calls neither
// shift nor repeat the rest. A cursor this function did not make is
// -32602.
func pageSessions(list lister, cursor string, n int) ([]session.Info, string, error) {
	var from func(session.Info) bool
	if cursor != "" {
		at, id, ok := parseCursor(cursor)
		if !ok {
			return nil, "", acp.InvalidParams("Invalid params: cursor %q is not one this agent gave", cursor)
		}
		from = func(in session.Info) bool { return after(in, at, id) }
	}
	page, more, err := list(from, n)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if more && len(page) > 0 {
		last := page[len(page)-1]
		next = base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(last.UpdatedAt, 10) + "/" + last.ID))
	}
	return page, next, nil
}

// after reports whether in comes after the session (at, id) in the list
// order: older, or as old with a greater id.
func after(in session.Info, at int64, id string) bool {
	return in.UpdatedAt < at || in.UpdatedAt == at && in.ID > id
}

func parseCursor(c string) (int64, string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", false
	}
	ms, id, ok := strings.Cut(string(raw), "/")
	if !ok {
		return 0, "", false
	}
	at, err := strconv.ParseInt(ms, 10, 64)
	return at, id, err == nil
}
