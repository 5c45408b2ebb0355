package session

import "github.com/dsh-acp/dsh-acp/tools"

// TurnChanges is what a prompt turn changed in the project's files,
// compared with the checkpoint taken before its first change: the card
// shown when the turn ends, logged so that a replay shows it again (the
// hunks, never whole files). Files holds the files listed (at most a
// bound, in path order); More counts the changed files left out. Added
// and Removed count the changed lines of every file listed.
type TurnChanges struct {
	Turn    int           `json:"turn"`
	Files   []ChangedFile `json:"files"`
	More    int           `json:"more,omitempty"`
	Added   int           `json:"added"`
	Removed int           `json:"removed"`
}

// File statuses of a ChangedFile.
const (
	FileCreated  = "created"
	FileModified = "modified"
	FileDeleted  = "deleted"
)

// ChangedFile is one file a turn changed. Path is absolute; Status is
// FileCreated, FileModified or FileDeleted. Diffs are its hunks (a created
// file: one with no old text; a deleted one: one with no new text), none
// for a binary file or when Note says why not (too large, no earlier copy
// kept). Line is the 1-based line of the first change (0: none). Added
// and Removed count its changed lines.
type ChangedFile struct {
	Path    string           `json:"path"`
	Status  string           `json:"status"`
	Binary  bool             `json:"binary,omitempty"`
	Diffs   []tools.FileDiff `json:"diffs,omitempty"`
	Line    int              `json:"line,omitempty"`
	Note    string           `json:"note,omitempty"`
	Added   int              `json:"added,omitempty"`
	Removed int              `json:"removed,omitempty"`
}

// TurnUndone records an /undo, run as turn By: the files of turn Turn
// put back as they were before it (Restored), and the ones left as they
// were (Skipped, one "path: reason" each). Turn 0 means nothing was
// undone (nothing to undo, or the user kept the changes); Note says why.
type TurnUndone struct {
	Turn     int      `json:"turn"`
	By       int      `json:"by"`
	Restored []string `json:"restored,omitempty"`
	Skipped  []string `json:"skipped,omitempty"`
	Note     string   `json:"note,omitempty"`
}

func (TurnChanges) EventType() string { return "turn/changes" }
func (TurnUndone) EventType() string  { return "turn/undone" }
func (TurnChanges) Transient() bool   { return false }
func (TurnUndone) Transient() bool    { return false }
func (TurnChanges) isData()           {}
func (TurnUndone) isData()            {}

func init() {
	decoders["turn/changes"] = decode[TurnChanges]
	decoders["turn/undone"] = decode[TurnUndone]
}
