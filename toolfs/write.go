package toolfs

import (
	"bytes"
	"context"

	"github.com/dsh-acp/dsh-acp/hunks"
	"github.com/dsh-acp/dsh-acp/internal/probe"
	"github.com/dsh-acp/dsh-acp/tools"
)

// WriteArgs are the arguments of `write`.
type WriteArgs struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

// Write returns the `write` tool: it creates a file, or replaces the whole
// content of one this session has observed, byte for byte, and records the
// new version. The model gets the read envelope around "Created file" or
// "Updated file". Errors (FsError): FS_NOT_OBSERVED (an existing file not
// read first), FS_STALE_VERSION (changed or deleted since observed),
// FS_NOT_REGULAR_FILE, FS_NOT_FOUND (a parent that is a file), FS_ABORTED,
// FS_IO_ERROR; a blank file_path gives INVALID_ARGS. On any error the file
// is left as it was. The result Meta is a Meta (OpCreate, OpUpdate with one
// diff per applied hunk, or OpUnchanged).
func Write() tools.Tool {
	return tools.Define(tools.Def[WriteArgs]{
		Name:        "write",
		Description: "Create or fully replace a UTF-8 text file.",
		Class:       tools.ClassEdit,
		Spec: tools.Spec{
			{Name: "file_path", Prop: tools.Prop{Type: tools.TypeString, Required: true}},
			{Name: "content", Prop: tools.Prop{Type: tools.TypeString, Required: true}},
		},
		Execute:       executeWrite,
		Access:        func(a WriteArgs) tools.Access { return tools.Access{Paths: []string{a.FilePath}} },
		PresentCall:   presentWriteCall,
		PresentStart:  presentWriteCall,
		PresentResult: presentWriteResult,
		Preview:       previewWrite,
	})
}

// checkWrite applies the write policy to f, given the version observed
// there (ok false: none), and loads the file: for a new file it returns a
// current with no info. Errors as Write's.
func checkWrite(ctx context.Context, s tools.Session, f file, exp version, ok bool) (*current, error) {
	info, err := statFile(f, "write")
	if err != nil {
		return nil, err
	}
	if info == nil {
		if ok {
			return nil, fsErr(CodeStaleVersion, "cannot write %q: file no longer exists", f.display)
		}
		return &current{editor: editorFor(s, f, nil)}, nil
	}
	if !ok {
		return nil, fsErr(CodeNotObserved, "cannot overwrite existing %q without reading it first", f.display)
	}
	cur, err := loadCurrent(ctx, f, info, editorFor(s, f, info), "write")
	if err != nil {
		return nil, err
	}
	if err := basisError(cur.basis(exp), "write", f); err != nil {
		return nil, err
	}
	return cur, nil
}

func executeWrite(ctx context.Context, ex *tools.Exec, a WriteArgs) (tools.Output, error) {
	if err := checkPath(a.FilePath); err != nil {
		return tools.Output{}, err
	}
	f, err := resolveFor(ex.Session, a.FilePath)
	if err != nil {
		return tools.Output{}, err
	}
	obs := observedOf(ex.Session)
	// The version is taken before waiting for the lock: a write that
	// landed meanwhile makes this one stale.
	exp, ok := obs.get(f.target)
	if err := ctx.Err(); err != nil {
		return tools.Output{}, aborted("write", err)
	}
	unlock, err := lockFile(ctx, f.target)
	if err != nil {
		return tools.Output{}, aborted("write", err)
	}
	defer unlock()
	cur, err := checkWrite(ctx, ex.Session, f, exp, ok)
	if err != nil {
		return tools.Output{}, err
	}
	content := []byte(a.Content)
	var stored []byte
	var ver version
	same := cur.info != nil && cur.editor == nil && bytes.Equal(cur.text, content)
	if same {
		// Already there: leave the file (and its mtime, inode, links) alone.
		stored, ver = content, diskVersion(cur.disk)
	} else if stored, ver, err = save(ctx, f, cur, content, "write"); err != nil {
		return tools.Output{}, err
	}
	obs.put(f.target, ver)

	body := "Updated file"
	var m Meta
	switch {
	case cur.info == nil:
		body = "Created file"
		m = Meta{Op: OpCreate, Path: f.display, Locations: []tools.FileLocation{{Path: f.display, Line: 1}}}
		if !bytes.Equal(stored, content) {
			m.Diffs, m.Note = createDiff(f.display, string(stored))
		}
	default:
		m = changeMeta(f.display, cur.text, stored)
	}
	if reformatted(content, stored) {
		body += "\n" + reformatNote
	}
	if cur.editor == nil && cur.info != nil && !same && peekAfterWrite(ctx, peekFor(ex.Session, f, cur.info), f, cur.disk, stored) {
		body += "\n" + peekWriteNote
	}
	return tools.Output{Content: []tools.Content{tools.Text(envelope(f.display, body))}, Meta: marshalMeta(m)}, nil
}

// reformatNote tells the model that the editor stored other text than it
// sent.
const reformatNote = "(The editor changed the text when saving it, e.g. by formatting; read the file again before editing it.)"

// reformatted reports whether the stored text differs from the text sent
// other than in line endings.
func reformatted(sent, stored []byte) bool {
	return !bytes.Equal(sent, stored) && toLF(string(sent)) != toLF(string(stored))
}

// changeMeta is the Meta of an existing file whose text went from before
// to after: its applied hunks, OpUnchanged when there are none, and an
// OpUpdate without diffs when either side is not text.
func changeMeta(path string, before, after []byte) Meta {
	probe.Diff()
	hs, err := hunks.Compute(before, after)
	switch {
	case err != nil:
		return Meta{Op: OpUpdate, Path: path}
	case len(hs) == 0:
		return Meta{Op: OpUnchanged, Path: path, Locations: []tools.FileLocation{{Path: path}}}
	}
	return hunkMeta(path, hs)
}

// previewWrite shows the hunks the write would apply to the file as the
// backend sees it now (an unsaved editor buffer counts), or the new file;
// nil when nothing would change. The policy errors of Write apply.
func previewWrite(ctx context.Context, ex *tools.Exec, a WriteArgs) (tools.ToolCallView, error) {
	if err := checkPath(a.FilePath); err != nil {
		return nil, err
	}
	f, err := resolveFor(ex.Session, a.FilePath)
	if err != nil {
		return nil, err
	}
	exp, ok := observedOf(ex.Session).get(f.target)
	cur, err := checkWrite(ctx, ex.Session, f, exp, ok)
	if err != nil {
		return nil, err
	}
	title := "Write " + a.FilePath
	if cur.info == nil {
		diffs, _ := createDiff(f.display, a.Content)
		return tools.DiffCall{Title: title, Diffs: diffs, Locations: []tools.FileLocation{{Path: f.display, Line: 1}}}, nil
	}
	return changePreview(title, changeMeta(f.display, cur.text, []byte(a.Content)), f.display, a.Content), nil
}

// changePreview turns a change's Meta into the preview card: nil when
// nothing changes, the whole new text when the old one is not text.
func changePreview(title string, m Meta, path, content string) tools.ToolCallView {
	switch {
	case m.Op == OpUnchanged:
		return nil
	case len(m.Diffs) == 0 && m.Note == "":
		diffs, _ := createDiff(path, content)
		return tools.DiffCall{Title: title, Diffs: diffs, Locations: []tools.FileLocation{{Path: path}}}
	}
	return tools.DiffCall{Title: title, Diffs: m.Diffs, Locations: m.Locations}
}

// presentWriteCall is the card from the arguments alone, also while the
// content streams: the title and the file, no diff. Only the disk can
// say whether the write creates the file (a diff with no old text) or
// overwrites one (the hunks against its text), so the diff comes from
// Preview, which the permission step computes before the call runs (and
// shows on the card at once, tools.Exec.OnPreview), and from the result.
func presentWriteCall(a WriteArgs) tools.ToolCallView {
	if a.FilePath == "" {
		return nil
	}
	return tools.DiffCall{Title: "Write " + a.FilePath, Locations: []tools.FileLocation{{Path: a.FilePath}}}
}

// presentWriteResult rebuilds the result card from the Meta: the applied
// hunks, the new file, or a text saying nothing changed. Without a usable
// Meta (an older log) it shows the whole content as new text, as the
// reference does.
func presentWriteResult(a WriteArgs, r tools.ResultInput) tools.ToolResultView {
	if r.IsError || a.FilePath == "" {
		return nil
	}
	title := "Write " + a.FilePath
	m, ok := parseMeta(r.Meta)
	if !ok {
		diffs, note := createDiff(a.FilePath, a.Content)
		return tools.DiffResult{Title: title, Diffs: diffs, Note: note}
	}
	switch {
	case m.Op == OpUnchanged:
		return tools.GenericResult{Title: title, Content: []tools.Content{tools.Text("No changes: the file already had this content.")}, Locations: m.Locations}
	case len(m.Diffs) == 0 && m.Note == "":
		// A create shown from the arguments, or an update whose old text
		// was not text.
		diffs, note := createDiff(m.Path, a.Content)
		locs := m.Locations
		if locs == nil {
			locs = []tools.FileLocation{{Path: m.Path}}
		}
		return tools.DiffResult{Title: title, Diffs: diffs, Locations: locs, Note: note}
	}
	return tools.DiffResult{Title: title, Diffs: m.Diffs, Locations: m.Locations, Note: m.Note}
}
