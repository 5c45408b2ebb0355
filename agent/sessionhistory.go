// This file keeps a session's model conversation between its requests,
// so that a step folds in only the events logged since the last one
// instead of deriving the whole conversation again.

package agent

import (
	"sync"

	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/session"
)

// sessionHistory is a session's request messages as its last request
// got them: the system message, then the conversation of the first n
// events of store (History's). The zero value holds none yet.
//
// What it returns is always what History(store.Events(), images, sys)
// returns. Events are only ever appended to a store, so it folds in the
// new ones (history.fold) except when that would give something else,
// and then builds the conversation again from all of them: another
// store (Session.Store replaced), another images (a model switch
// between one that takes images and one that gets their notes), new
// events that extends refuses (a completed compaction, /compact's or
// an automatic one; a later result of a call already written). A new
// system message (the editor's prompt, the date, AGENTS.md) replaces
// the first message of a copy. Undo rewrites files, not events: it
// needs nothing. A loaded, resumed or forked session is a new Session
// with a new store.
type sessionHistory struct {
	mu    sync.Mutex
	store *session.Store
	n     int
	h     *history
}

// messages returns the messages of store's next request: sys, then the
// conversation of its events (images as for History). The slice shares
// its backing array with later requests' but never changes (its capacity
// is its length), so the caller may append to it.
func (sh *sessionHistory) messages(store *session.Store, images bool, sys llm.Message) []llm.Message {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.h == nil || sh.store != store || sh.h.images != images {
		sh.rebuild(store, images, sys)
	} else if events, n := store.EventsFrom(sh.n); n < sh.n || !sh.h.extends(events) {
		sh.rebuild(store, images, sys)
	} else {
		sh.h.fold(events)
		sh.n = n
	}
	msgs := sh.h.msgs
	if msgs[0].Role != sys.Role || msgs[0].Content != sys.Content {
		// Earlier requests keep their system message.
		msgs = append(make([]llm.Message, 0, cap(msgs)), msgs...)
		msgs[0] = sys
		sh.h.msgs = msgs
	}
	return boundImages(msgs[:len(msgs):len(msgs)])
}

// rebuild derives the conversation from all of store's events.
func (sh *sessionHistory) rebuild(store *session.Store, images bool, sys llm.Message) {
	events := store.Events()
	sh.store, sh.n, sh.h = store, len(events), newHistory(events, images, []llm.Message{sys})
}
