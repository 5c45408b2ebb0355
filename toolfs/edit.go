package toolfs

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// EditArgs are the arguments of `edit`.
type EditArgs struct {
	FilePath   string `json:"file_path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// Edit returns the `edit` tool: it replaces literal text in a file this
// session has observed and records the new version. Matching ignores the
// difference between "\r\n" and "\n"; the replacement takes the file's
// line ending style (CRLF when CRLF pairs outnumber bare LFs in its first
// 4096 bytes); every byte outside the replaced ranges (a BOM, the other
// line endings, a missing final newline) is kept. The model gets "The file
// <path> has been updated successfully." (with replace_all: "The file
// <path> has been updated. All occurrences were successfully replaced.").
// Errors (FsError): FS_NOT_OBSERVED, FS_STALE_VERSION (also for a file
// deleted since), FS_NOT_REGULAR_FILE, FS_NOT_TEXT (a NUL byte anywhere or
// invalid UTF-8), FS_EDIT_NOT_FOUND, FS_AMBIGUOUS_EDIT, FS_NOT_FOUND (a
// parent that is a file), FS_ABORTED, FS_IO_ERROR; the argument rules give
// INVALID_ARGS. On any error the file is left as it was. The result Meta
// is a Meta (OpUpdate with one diff per applied hunk).
func Edit() tools.Tool {
	return tools.Define(tools.Def[EditArgs]{
		Name:        "edit",
		Description: "Edit an existing UTF-8 text file by replacing literal text.",
		Class:       tools.ClassEdit,
		Spec: tools.Spec{
			{Name: "file_path", Prop: tools.Prop{Type: tools.TypeString, Required: true}},
			{Name: "old_string", Prop: tools.Prop{Type: tools.TypeString, Required: true, Description: "Literal text to replace. Must match exactly."}},
			{Name: "new_string", Prop: tools.Prop{Type: tools.TypeString, Required: true, Description: "Use an empty string to delete the match."}},
			{Name: "replace_all", Prop: tools.Prop{Type: tools.TypeBoolean, Description: "Defaults to false; when false, old_string must appear exactly once."}},
		},
		Execute:       executeEdit,
		Access:        func(a EditArgs) tools.Access { return tools.Access{Paths: []string{a.FilePath}} },
		PresentCall:   presentEditCall,
		PresentStart:  presentEditStart,
		PresentResult: presentEditResult,
		Preview:       previewEdit,
	})
}

// checkEditArgs applies the argument rules.
func checkEditArgs(a EditArgs) error {
	if err := checkPath(a.FilePath); err != nil {
		return err
	}
	if a.OldString == "" {
		return argErr("old_string must be a non-empty string")
	}
	if a.OldString == a.NewString {
		return argErr("old_string and new_string must differ")
	}
	return nil
}

// planEdit loads f, checks it against the observed version exp, then that
// it is text, and applies the edit: it returns the file as loaded and the
// new content. Errors as Edit's.
func planEdit(ctx context.Context, s tools.Session, f file, exp version, a EditArgs) (*current, []byte, error) {
	info, err := statFile(f, "edit")
	if err != nil {
		return nil, nil, err
	}
	if info == nil {
		return nil, nil, fsErr(CodeStaleVersion, "cannot edit %q: file changed since it was read", f.display)
	}
	cur, err := loadCurrent(ctx, f, info, editorFor(s, f, info), "edit")
	if err != nil {
		return nil, nil, err
	}
	if err := basisError(cur.basis(exp), "edit", f); err != nil {
		return nil, nil, err
	}
	check := [][]byte{cur.text}
	if cur.editor != nil {
		check = append(check, cur.disk, cur.buf)
	}
	for _, b := range check {
		if p := editProblem(b); p != "" {
			return nil, nil, fsErr(CodeNotText, "cannot edit %q: %s", f.display, p)
		}
	}
	after, err := applyEdit(cur.text, a, f.display)
	if err != nil {
		return nil, nil, err
	}
	return cur, after, nil
}

// basisError is the FS_STALE_VERSION error of a basis outcome (nil for
// basisOK): `cannot <op> "<p>": file changed since it was read`, or, after
// a read that found the editor's buffer and the disk both changed,
// `cannot <op> "<p>": the editor's buffer and the file on disk both
// changed since it was read; read it again first`.
func basisError(outcome int, op string, f file) error {
	switch outcome {
	case basisStale:
		return fsErr(CodeStaleVersion, "cannot %s %q: file changed since it was read", op, f.display)
	case basisConflict:
		return fsErr(CodeStaleVersion, "cannot %s %q: the editor's buffer and the file on disk both changed since it was read; read it again first", op, f.display)
	}
	return nil
}

// applyEdit replaces a.OldString in text (see Edit for the rules). display
// names the file in errors: FS_EDIT_NOT_FOUND `old_string was not found in
// "<p>"`, FS_AMBIGUOUS_EDIT `old_string matched <n> times in "<p>"; provide
// a more specific old_string or set replace_all to true`.
func applyEdit(text []byte, a EditArgs, display string) ([]byte, error) {
	body := text
	hasBOM := bytes.HasPrefix(text, bom)
	if hasBOM {
		body = text[len(bom):]
	}
	v := newLFView(body)
	old, repl := []byte(toLF(a.OldString)), toLF(a.NewString)
	var starts []int
	for i := 0; i <= len(v.lf); {
		j := bytes.Index(v.lf[i:], old)
		if j < 0 {
			break
		}
		starts = append(starts, i+j)
		i += j + len(old)
	}
	switch {
	case len(starts) == 0:
		return nil, fsErr(CodeEditNotFound, "old_string was not found in %q", display)
	case len(starts) > 1 && !a.ReplaceAll:
		return nil, fsErr(CodeAmbiguousEdit, "old_string matched %d times in %q; provide a more specific old_string or set replace_all to true", len(starts), display)
	}
	if usesCRLF(body) {
		repl = crlfText(repl)
	}
	out := v.replace(starts, len(old), []byte(repl))
	if hasBOM {
		out = append(append(make([]byte, 0, len(bom)+len(out)), bom...), out...)
	}
	return out, nil
}

func executeEdit(ctx context.Context, ex *tools.Exec, a EditArgs) (tools.Output, error) {
	if err := checkEditArgs(a); err != nil {
		return tools.Output{}, err
	}
	f, err := resolveFor(ex.Session, a.FilePath)
	if err != nil {
		return tools.Output{}, err
	}
	obs := observedOf(ex.Session)
	// The version is taken before waiting for the lock: an edit that
	// landed meanwhile makes this one stale.
	exp, ok := obs.get(f.target)
	if !ok {
		return tools.Output{}, fsErr(CodeNotObserved, "edit requires reading %q first", f.display)
	}
	return runEdit(ctx, ex.Session, ex.Call, obs, f, exp, a)
}

// runEdit edits f under its lock, provided it is still at version exp,
// and records the new version in obs. The change the call's preview
// computed (takePlan) is applied when the file is still the one it
// read; otherwise the file is read and the edit computed again.
func runEdit(ctx context.Context, s tools.Session, call *tools.Call, obs *observed, f file, exp version, a EditArgs) (tools.Output, error) {
	if err := ctx.Err(); err != nil {
		return tools.Output{}, aborted("edit", err)
	}
	unlock, err := lockFile(ctx, f.target)
	if err != nil {
		return tools.Output{}, aborted("edit", err)
	}
	defer unlock()
	var cur *current
	var after []byte
	var meta *Meta
	if p := takePlan(call, f, exp); p != nil {
		cur, after, meta = p.cur, p.after, &p.meta
	} else if cur, after, err = planEdit(ctx, s, f, exp, a); err != nil {
		return tools.Output{}, err
	}
	stored, ver, err := save(ctx, f, cur, after, "edit")
	if err != nil {
		return tools.Output{}, err
	}
	obs.put(f.target, ver)
	text := fmt.Sprintf("The file %s has been updated successfully.", f.display)
	if a.ReplaceAll {
		text = fmt.Sprintf("The file %s has been updated. All occurrences were successfully replaced.", f.display)
	}
	if reformatted(after, stored) {
		text += "\n" + reformatNote
	}
	if cur.editor == nil && peekAfterWrite(ctx, peekFor(s, f, cur.info), f, cur.disk, stored) {
		text += "\n" + peekWriteNote
	}
	if meta == nil || !bytes.Equal(stored, after) {
		m := changeMeta(f.display, cur.text, stored)
		meta = &m
	}
	return tools.Output{Content: []tools.Content{tools.Text(text)}, Meta: marshalMeta(*meta), View: editResult(a.FilePath, *meta)}, nil
}

// previewEdit shows the hunks the edit would apply to the file as the
// backend sees it now (an unsaved editor buffer counts). The errors of
// Edit apply.
func previewEdit(ctx context.Context, ex *tools.Exec, a EditArgs) (tools.ToolCallView, error) {
	if err := checkEditArgs(a); err != nil {
		return nil, err
	}
	f, err := resolveFor(ex.Session, a.FilePath)
	if err != nil {
		return nil, err
	}
	exp, ok := observedOf(ex.Session).get(f.target)
	if !ok {
		return nil, fsErr(CodeNotObserved, "edit requires reading %q first", f.display)
	}
	readAt := time.Now()
	cur, after, err := planEdit(ctx, ex.Session, f, exp, a)
	if err != nil {
		return nil, err
	}
	meta := changeMeta(f.display, cur.text, after)
	keepPlan(ex.Call, &editPlan{target: f.target, exp: exp, cur: cur, after: after, meta: meta, readAt: readAt})
	return changePreview("Edit "+a.FilePath, meta, f.display, string(after)), nil
}

// presentEditCall: the requested old and new strings (an empty old string,
// met only on replay, shows as no old text).
func presentEditCall(a EditArgs) tools.ToolCallView {
	if a.FilePath == "" {
		return nil
	}
	d := tools.FileDiff{Path: a.FilePath, NewText: a.NewString}
	if a.OldString != "" {
		old := a.OldString
		d.OldText = &old
	}
	return tools.DiffCall{Title: "Edit " + a.FilePath, Diffs: []tools.FileDiff{d}, Locations: []tools.FileLocation{{Path: a.FilePath}}}
}

// presentEditStart is the card of an edit whose arguments are still
// streaming, from the moment the path is complete: the title and the
// file; the strings follow with the complete arguments.
func presentEditStart(a EditArgs) tools.ToolCallView {
	if a.FilePath == "" {
		return nil
	}
	return tools.DiffCall{Title: "Edit " + a.FilePath, Locations: []tools.FileLocation{{Path: a.FilePath}}}
}

// presentEditResult rebuilds the applied hunks from the Meta; without a
// usable Meta it gives nil, so the tool's text shows.
func presentEditResult(a EditArgs, r tools.ResultInput) tools.ToolResultView {
	if r.IsError || a.FilePath == "" {
		return nil
	}
	m, ok := parseMeta(r.Meta)
	if !ok {
		return nil
	}
	return editResult(a.FilePath, m)
}

// editResult is the result card of an edit of path whose Meta is m (nil
// for the tool's text).
func editResult(path string, m Meta) tools.ToolResultView {
	if path == "" {
		return nil
	}
	title := "Edit " + path
	switch {
	case m.Op == OpUnchanged:
		return tools.GenericResult{Title: title, Content: []tools.Content{tools.Text("No changes: the edit left the file as it was.")}, Locations: m.Locations}
	case m.Op != OpUpdate || len(m.Diffs) == 0 && m.Note == "":
		return nil
	}
	return tools.DiffResult{Title: title, Diffs: m.Diffs, Locations: m.Locations, Note: m.Note}
}
