package bridge

import (
	"context"
	"strings"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/slash"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Slash commands (package slash): each session offers the built-ins and
// the user's command files as available_commands_update, once the
// answer that opened it is written (opened: session/new, load, resume
// and fork alike; Zed drops an update that comes before it), and again
// at a prompt when a command folder changed since. A prompt that starts
// with a command the session offers runs that command; any other
// "/word" goes to the model as it is.

// commandDirs are the folders of s's user commands.
func (b *Bridge) commandDirs(s *liveSession) slash.Dirs {
	return slash.Dirs{Project: slash.ProjectDir(s.cwd), User: b.cfg.CommandsDir}
}

// loadCommands reads s's commands and keeps them in s; what the folders
// held that is left out is logged.
func (b *Bridge) loadCommands(s *liveSession) *slash.Set {
	set, problems := slash.Load(b.commandDirs(s))
	for _, p := range problems {
		b.log.Warn(p, "session", s.id)
	}
	s.mu.Lock()
	s.cmds = set
	s.mu.Unlock()
	return set
}

// sendCommands sends s's commands to the editor.
func (b *Bridge) sendCommands(s *liveSession, set *slash.Set) {
	u := acp.AvailableCommandsUpdate{AvailableCommands: []acp.AvailableCommand{}}
	for _, c := range set.Commands() {
		ac := acp.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.Hint != "" {
			ac.Input = &acp.UnstructuredInputHint{Hint: c.Hint}
		}
		u.AvailableCommands = append(u.AvailableCommands, ac)
	}
	if err := b.client.SessionUpdate(context.Background(), acp.SessionNotification{SessionID: s.id, Update: u}); err != nil {
		b.log.Debug("could not send the available commands", "session", s.id, "err", err)
	}
}

// refreshCommands re-reads s's commands when a command folder changed
// since they were read, and sends them again; it returns the commands
// in force.
func (b *Bridge) refreshCommands(s *liveSession) *slash.Set {
	s.mu.Lock()
	set := s.cmds
	s.mu.Unlock()
	if set != nil && set.Fingerprint == slash.Fingerprint(b.commandDirs(s)) {
		return set
	}
	set = b.loadCommands(s)
	b.sendCommands(s, set)
	return set
}

// offersCommand reports whether content starts with a slash command of
// the commands s offers now (s.mu held).
func (s *liveSession) offersCommand(content []tools.Content) bool {
	if len(content) == 0 || s.cmds == nil {
		return false
	}
	name, _, ok := slash.Parse(content[0].Text)
	if !ok {
		return false
	}
	_, ok = s.cmds.Lookup(name)
	return ok
}

// turnInput is a prompt made ready to run: the agent's input and the
// permission mode whose rules the turn runs under ("" for the session's).
type turnInput struct {
	agent.Input
	rules string
	// command is the slash command run ("" for none), for the log.
	command string
}

// prepareTurn turns a prompt's content into the turn's input, after
// refreshing the session's commands (refreshCommands): a command the
// session offers is run as its prompt; anything else is the prompt as
// it is. Only the first text block is read for a command; the
// blocks after it (mentions, resources) follow the command's prompt.
func (b *Bridge) prepareTurn(ctx context.Context, s *liveSession, content []tools.Content) (turnInput, error) {
	in := turnInput{Input: agent.Input{Prompt: content}}
	set := b.refreshCommands(s)
	if len(content) == 0 {
		return in, nil
	}
	name, args, ok := slash.Parse(content[0].Text)
	if !ok {
		return in, nil
	}
	c, ok := set.Lookup(name)
	if !ok {
		return in, nil // not ours: the model reads it as text
	}
	rest := content[1:]
	expanded := func(prompt string) []tools.Content {
		return append([]tools.Content{tools.Text(prompt)}, rest...)
	}
	in.Typed, in.command = content, c.Name
	switch {
	case !c.Builtin:
		in.Prompt = expanded(c.Expand(args))
	case c.Name == slash.Compact:
		in.Prompt, in.Typed = content, nil
		in.Compact = &agent.CompactRequest{Focus: strings.TrimSpace(args + "\n" + tools.JoinText(rest))}
	case c.Name == slash.Undo:
		in.Prompt, in.Typed = content, nil
		in.Local = b.undoTurn(s)
	case c.Name == slash.Init:
		in.Prompt = expanded(slash.InitPrompt(args))
	case c.Name == slash.Review:
		p, err := slash.ReviewPrompt(ctx, b.cfg.AgentCmd.Git, s.cwd, args)
		if err != nil {
			return in, &acp.Error{Code: acp.CodeInternalError, Message: "Internal error: " + err.Error(), Data: map[string]any{"reason": "GIT_UNAVAILABLE"}}
		}
		in.Prompt, in.rules = expanded(p), permission.ModePlan
	}
	b.log.Info("slash command", "session", s.id, "command", c.Name, "user", !c.Builtin)
	return in, nil
}
