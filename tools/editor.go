package tools

import (
	"context"
	"sync"
)

// Editor is the editor's view of files, offered when the client advertised
// `fs.readTextFile` / `fs.writeTextFile` (ACP fs/read_text_file and
// fs/write_text_file). Paths are absolute. ReadTextFile returns the whole
// text the editor holds (unsaved changes included); WriteTextFile replaces
// it (the editor may reformat on save). Either method may be unsupported:
// CanRead / CanWrite say which are. The bridge implements it per session.
type Editor interface {
	CanRead() bool
	CanWrite() bool
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

type editorKey struct{}

// SetEditor makes e the session's editor (call it before any tool runs).
func SetEditor(s Session, e Editor) {
	s.Value(editorKey{}, func() any { return e })
}

// EditorOf returns the session's editor, or nil when the client offers
// none (or s is nil).
func EditorOf(s Session) Editor {
	if s == nil {
		return nil
	}
	e, _ := s.Value(editorKey{}, nil).(Editor)
	return e
}

type noticeKey struct{}

type noticeBox struct {
	mu    sync.Mutex
	texts []string
}

// PostNotice queues text for the model: the agent adds it to the
// conversation at the start of the session's next model request (it does
// not start a turn by itself). Used for background task completions.
func PostNotice(s Session, text string) {
	if s == nil {
		return
	}
	b := s.Value(noticeKey{}, func() any { return &noticeBox{} }).(*noticeBox)
	b.mu.Lock()
	b.texts = append(b.texts, text)
	b.mu.Unlock()
}

// TakeNotices returns and clears the queued notices, oldest first,
// including those still posted to the sessions s replaced (Inherit).
func TakeNotices(s Session) []string {
	if s == nil {
		return nil
	}
	out := TakeNotices(previous(s))
	b, _ := s.Value(noticeKey{}, nil).(*noticeBox)
	if b == nil {
		return out
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out = append(out, b.texts...)
	b.texts = nil
	return out
}

type prevKey struct{}

// Inherit links s to prev, the session it replaces (an editor
// reconnecting to a live session gets a fresh tool state): closing s
// also runs prev's close hooks (its background commands stop), notices
// still posted to prev reach s's next model request, and s shares
// prev's carried conversation state (Carry). Call it before any tool
// runs in s.
func Inherit(s, prev Session) {
	if s == nil || prev == nil || s == prev {
		return
	}
	s.Value(prevKey{}, func() any { return prev })
	OnClose(s, func() { CloseSession(prev) })
	eachCarried(func(key any, _ func(any) any) {
		if v := prev.Value(key, nil); v != nil {
			s.Value(key, func() any { return v })
		}
	})
}

// previous returns the session s replaced, or nil.
func previous(s Session) Session {
	p, _ := s.Value(prevKey{}, nil).(Session)
	return p
}
