package bridge

import (
	"context"
	"fmt"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/present"
	"github.com/dsh-acp/dsh-acp/session"
)

// childReplay replays the children logged in a session's log
// (session.Subagent events) as they were shown live: with `subagents`,
// each child's announcement on its parent, its events through a replay
// presenter of its own on its id, and its final state; without it
// nothing (the parent's cards hold the children's calls and answers).
// Every child becomes known to the bridge again (its id is a child's).
type childReplay struct {
	b     *Bridge
	s     *liveSession
	view  present.View
	shown bool
	pres  map[string]*present.Presenter
	open  []string // started children without an end, in start order
}

func (b *Bridge) newChildReplay(s *liveSession, v present.View) *childReplay {
	b.mu.Lock()
	shown := b.caps.Subagents != nil
	b.mu.Unlock()
	return &childReplay{b: b, s: s, view: v, shown: shown, pres: map[string]*present.Presenter{}}
}

// event replays one logged child event.
func (r *childReplay) event(ctx context.Context, d session.Subagent) error {
	switch {
	case d.Start != nil:
		r.b.subs.add(&childRun{b: r.b, id: d.Child, parent: r.s, announcedOn: d.Start.Parent})
		r.open = append(r.open, d.Child)
		if err := r.send(ctx, d.Start.Parent, announcement(d.Child, *d.Start)); err != nil {
			return err
		}
		return r.send(ctx, d.Start.Parent, childCard(d.Child, *d.Start))
	case d.Event != nil:
		p := r.pres[d.Child]
		if p == nil {
			p = present.NewPresenter(r.view, sessionLookup{r.b.cfg.Tools, r.s.agent.Tools})
			r.pres[d.Child] = p
		}
		for _, u := range p.Updates(*d.Event) {
			if err := r.send(ctx, d.Child, u); err != nil {
				return err
			}
		}
	case d.End != nil:
		for i, id := range r.open {
			if id == d.Child {
				r.open = append(r.open[:i:i], r.open[i+1:]...)
				break
			}
		}
		return r.send(ctx, r.parentOf(d.Child), acp.SubagentUpdate{SessionID: d.Child, State: idleState(*d.End)})
	}
	return nil
}

// parentOf is the session a child was announced on (its Start's Parent;
// the top session for a child the log does not name).
func (r *childReplay) parentOf(child string) string {
	if c := r.b.subs.get(child); c != nil && c.announcedOn != "" {
		return c.announcedOn
	}
	return r.s.id
}

// finish ends every child the log leaves running (the agent stopped
// while it ran) with the unknown state: its outcome is not known.
func (r *childReplay) finish(ctx context.Context) error {
	for _, id := range r.open {
		if err := r.send(ctx, r.parentOf(id), acp.SubagentUpdate{SessionID: id, State: &acp.SubagentState{State: acp.SubagentUnknown}}); err != nil {
			return err
		}
	}
	r.open = nil
	return nil
}

func (r *childReplay) send(ctx context.Context, id string, u acp.Update) error {
	if !r.shown {
		return nil
	}
	if err := r.b.client.SessionUpdate(ctx, acp.SessionNotification{SessionID: id, Update: u}); err != nil {
		return fmt.Errorf("replaying session %s: %w", r.s.id, err)
	}
	return nil
}
