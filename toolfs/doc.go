// Package toolfs provides the file tools `read`, `write` and `edit`
// as the ported harness defines them: their
// parameters, texts, limits and error codes, the read-before-write policy,
// and two backends.
//
// Units: lines are 1-based; the per-line limit counts characters as runes
// (Unicode code points); the output window and the payload bound count
// bytes of UTF-8.
//
// Policy. Every successful read, write and edit records, per session and per
// file (keyed by the file's real path, symlinks resolved), the version it
// observed: a 64-bit hash of the content the backend returned (and of the
// bytes on disk). An edit needs an observation of that file (a windowed read
// is enough), else FS_NOT_OBSERVED; overwriting an existing file needs one
// too, creating a new file does not. A file whose content differs from the
// observed version gives FS_STALE_VERSION, checked before any matching.
// Versions compare content, not timestamps: a `touch` is not a change, and
// two writes within one clock tick are still told apart.
//
// Backends. The local disk (the default) writes atomically (a temporary file
// in the file's directory, fsync, rename, fsync of the directory), keeps the
// file mode and, when permitted, its owner, writes through symlinks, keeps a
// UTF-8 BOM, the CRLF style of a file and a missing final newline on edit,
// serialises mutations of one file with a per-file lock, and streams reads
// of files of 10 MiB or more. The editor backend (the client advertised
// both fs.readTextFile and fs.writeTextFile; files inside the session cwd
// only, under 10 MiB on disk) reads and writes through the client, so
// unsaved buffers are seen and edits are tracked by the editor; after a
// write it reads the file back and records that as the observed version,
// so the editor's format-on-save does not make the next edit stale.
// Reads and writes always go to one place: a client that offers only one
// of the two methods gets the disk for both, and when it can read, the
// model is told when its buffer differs from the disk.
//
// Buffer and disk. Every read and mutation through the editor reads the
// disk too, and judges both against the session's last look at the file
// (bufferState), so an edit never writes back text the model did not see:
// when only the disk changed (a shell command; the editor has not
// reloaded), the disk is shown and edited, written through the editor;
// when the buffer has unsaved changes and the disk did not move, the
// buffer is; when both changed, the buffer is shown and edits are refused
// until the next read. Each case is told to the model in a one-line note.
// An edit applies only to the text the last read showed, still in place.
//
// Cards. read shows a generic card; write and edit show diff cards, at call
// time from the arguments and at result time one diff and one location per
// applied hunk, rebuilt from the result Meta (see Meta), whose diff text is
// bounded to MaxDiffBytes.
package toolfs
