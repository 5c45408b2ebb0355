// Package checkpoint takes a session's per-turn checkpoints of its
// project and says what each turn changed (the "Changed N files" card)
// and how to put it back (/undo).
//
// In a git work tree (found from the session's cwd, also a subfolder or a
// linked worktree) a checkpoint is a commit of the work tree (tracked and
// untracked files, not ignored ones) under RefPrefix +
// "<session>/<turn>", built with an index of the agent's own (a copy of
// the user's at first), so the user's index, branches, stash and reflog
// are never written. The agent's git runs with every setting that would
// run a program off (filter drivers, fsmonitor, hooks, external diff,
// textconv, pager, signing, automatic gc) and without the user's global
// and system config (runGit). At the end of a turn the ref is moved to a
// commit of the work tree after the turn whose parent is the checkpoint
// (removed when nothing changed); /undo compares the files with it and
// puts them back from the parent.
//
// Outside git, the before-image of each file a tool names is kept in the
// state dir (up to MaxFileBytes a file, MaxImageBytes a turn), and a walk
// of the project with the search tools' ignore rules (size and mtime, at
// most MaxWalkFiles files) finds what commands changed, which /undo can
// name but not restore. A turn's record is written beside its
// before-images (manifest.go), so a later process of the session can
// undo it too.
//
// Bounds: a session keeps its last MaxTurns checkpoints; any checkpoint
// older than MaxAge is removed when a new one is made; Tracker.Remove
// removes a session's (with the session). A card lists at most MaxFiles
// files and MaxDiffBytes of hunks.
package checkpoint
