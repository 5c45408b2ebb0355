package toolfs

import (
	"bytes"
	"context"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/dsh-acp/dsh-acp/tools"
)

// ReadArgs are the arguments of `read`. Offset and Limit are nil when
// absent; they must be positive integers (Limit at most MaxLines).
type ReadArgs struct {
	FilePath string   `json:"file_path"`
	Offset   *float64 `json:"offset"`
	Limit    *float64 `json:"limit"`
}

// Read returns the `read` tool: it returns a window of a UTF-8 text file as
// numbered lines in the envelope
// "<path>P</path>\n<type>file</type>\n<content>\n…\n</content>" (P the
// absolute path) and records the version it saw. Errors (FsError):
// FS_NOT_FOUND (missing file, offset past the end, a parent that is a
// file), FS_NOT_REGULAR_FILE, FS_NOT_TEXT (a NUL byte in the first 8 KiB,
// or invalid UTF-8), FS_ABORTED, FS_IO_ERROR; argument rules give
// INVALID_ARGS with the reference's texts.
func Read() tools.Tool {
	return tools.Define(tools.Def[ReadArgs]{
		Name:        "read",
		Description: "Read a UTF-8 text file and return line-numbered content. A PNG, JPEG, GIF or WebP image inside the project is returned as the image itself.",
		// Reads change nothing, so reads may run beside each other.
		Class:           tools.ClassReadOnly,
		ConcurrencySafe: true,
		Spec: tools.Spec{
			{Name: "file_path", Prop: tools.Prop{Type: tools.TypeString, Required: true}},
			{Name: "offset", Prop: tools.Prop{Type: tools.TypeNumber, Description: "1-based first line to return. Defaults to 1."}},
			{Name: "limit", Prop: tools.Prop{Type: tools.TypeNumber, Description: "Defaults to 2000."}},
		},
		Execute:       executeRead,
		Access:        func(a ReadArgs) tools.Access { return tools.Access{Paths: []string{a.FilePath}} },
		PresentCall:   presentReadCall,
		PresentStart:  presentReadStart,
		PresentResult: presentReadResult,
	})
}

// presentReadResult shows a successful read as the user's view of it
// (readCard: the line range and the text in a fence of the file's
// language, never the model's envelope). A failed read shows the tool's
// text, and a read of a path that does not exist clears the card's
// location (a path such as "g.md:1-20" or "file:///x" names no file, and
// an editor following the card would open an empty one).
func presentReadResult(_ ReadArgs, r tools.ResultInput) tools.ToolResultView {
	for _, c := range r.Content {
		if c.Type == tools.ContentImage {
			// An image file: the card shows a line saying what it is
			// and the image.
			return tools.GenericResult{Content: []tools.Content{tools.Text(tools.ImageNote(c, "")), c}}
		}
	}
	if !r.IsError {
		return readCard(tools.JoinText(r.Content))
	}
	if r.Error == nil || r.Error.Code != CodeNotFound {
		return nil
	}
	if strings.HasPrefix(tools.JoinText(r.Content), "Error: offset ") {
		return nil // the file exists; the offset is past its end
	}
	return tools.GenericResult{Locations: []tools.FileLocation{}}
}

// maxOffset bounds an offset kept as an int; any larger one is past the
// end of every file.
const maxOffset = 1 << 53

// isPositiveInt reports whether x is an integer ≥ 1.
func isPositiveInt(x float64) bool {
	return x >= 1 && x == math.Trunc(x) && !math.IsInf(x, 0)
}

// jsNumber formats x as JavaScript prints a number (for titles and
// messages that echo an argument).
func jsNumber(x float64) string {
	if math.Abs(x) >= 1e21 {
		return strings.Replace(strconv.FormatFloat(x, 'g', -1, 64), "e+0", "e+", 1)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// envelope wraps a tool's text for the model.
func envelope(path, body string) string {
	return "<path>" + path + "</path>\n<type>file</type>\n<content>\n" + body + "\n</content>"
}

// checkPath applies the rule shared by the three tools.
func checkPath(p string) error {
	if strings.TrimSpace(p) == "" {
		return argErr("file_path must be a non-empty string")
	}
	return nil
}

// cwdOf returns the session's cwd ("" without a session: the process's).
func cwdOf(s tools.Session) string {
	if s == nil {
		return ""
	}
	return s.Cwd()
}

func executeRead(ctx context.Context, ex *tools.Exec, a ReadArgs) (tools.Output, error) {
	if err := checkPath(a.FilePath); err != nil {
		return tools.Output{}, err
	}
	offset, limit, offsetText := 1, MaxLines, "1"
	if a.Offset != nil {
		if !isPositiveInt(*a.Offset) {
			return tools.Output{}, argErr("offset must be a positive integer")
		}
		offset, offsetText = int(min(*a.Offset, maxOffset)), jsNumber(*a.Offset)
	}
	if a.Limit != nil {
		if !isPositiveInt(*a.Limit) {
			return tools.Output{}, argErr("limit must be a positive integer")
		}
		if *a.Limit > MaxLines {
			return tools.Output{}, argErr("limit must be less than or equal to 2000")
		}
		limit = int(*a.Limit)
	}
	if err := ctx.Err(); err != nil {
		return tools.Output{}, aborted("read", err)
	}
	f, err := resolveFor(ex.Session, a.FilePath)
	if err != nil {
		return tools.Output{}, err
	}
	info, err := statFile(f, "read")
	if err != nil {
		return tools.Output{}, err
	}
	if info == nil {
		return tools.Output{}, fsErr(CodeNotFound, "cannot read %q: not found", f.display)
	}
	if out, ok, err := readImage(ctx, f, info); ok {
		return out, err
	}
	var (
		body, note string
		total      int
		ver        version
	)
	obs := observedOf(ex.Session)
	e := editorFor(ex.Session, f, info)
	switch {
	case e == nil && streams(info):
		body, total, ver, err = readStreamed(ctx, f, offset, limit)
	default:
		var text []byte
		if e != nil {
			text, ver, note, err = readEditor(ctx, ex.Session, obs, f, info, e)
		} else {
			text, ver, err = readDisk(ctx, f)
			if err == nil && peekDiffers(ctx, peekFor(ex.Session, f, info), f, text) {
				note = peekReadNote
			}
		}
		if err == nil {
			body, total = windowBytes(bytes.TrimPrefix(text, bom), offset, limit)
		}
	}
	if err != nil {
		return tools.Output{}, err
	}
	if offset > total && !(total == 0 && offset == 1) {
		return tools.Output{}, fsErr(CodeNotFound, "offset %s is out of range for %q (%d lines)", offsetText, f.display, total)
	}
	obs.put(f.target, ver)
	if note != "" {
		body += "\n" + note
	}
	return tools.Output{Content: []tools.Content{tools.Text(envelope(f.display, body))}}, nil
}

// streams reports whether a read of the file described by info streams
// it: a size of StreamThreshold or more, or an unknown size (0).
func streams(info fs.FileInfo) bool {
	return info.Size() >= StreamThreshold || info.Size() == 0
}

// readDisk loads f's text from disk. Errors: FS_NOT_TEXT, FS_ABORTED,
// FS_IO_ERROR.
func readDisk(ctx context.Context, f file) ([]byte, version, error) {
	if err := ctx.Err(); err != nil {
		return nil, version{}, aborted("read", err)
	}
	disk, err := f.readFile()
	if err != nil {
		return nil, version{}, ioErr("read", f.display, err)
	}
	if p := textProblem(disk); p != "" {
		return nil, version{}, fsErr(CodeNotText, "cannot read %q: %s", f.display, p)
	}
	return disk, diskVersion(disk), nil
}

// readEditor loads f's text through the editor e: the disk is read too
// (and must be text as well), the two are judged against what obs last
// observed of f (see bufferState), and the side to show is returned with
// its version and the note that goes with it. Errors: FS_NOT_TEXT,
// FS_ABORTED, FS_IO_ERROR (an editor's refusal with its message).
func readEditor(ctx context.Context, s tools.Session, obs *observed, f file, info fs.FileInfo, e tools.Editor) ([]byte, version, string, error) {
	disk, _, err := readDisk(ctx, f)
	if err != nil {
		return nil, version{}, "", err
	}
	text, err := e.ReadTextFile(ctx, f.display)
	if err != nil {
		if ctx.Err() != nil {
			return nil, version{}, "", aborted("read", ctx.Err())
		}
		return nil, version{}, "", ioErr("read", f.display, err)
	}
	buf := []byte(text)
	dsum, bsum := sumOf(disk), sumOf(buf)
	prev, seen := obs.get(f.target)
	st := judge(prev, seen, dsum, bsum, sameText(buf, disk), recentDisk(s, info))
	shown := buf
	if st == bufLagging {
		shown = disk
	} else if p := textProblem(buf); p != "" {
		return nil, version{}, "", fsErr(CodeNotText, "cannot read %q: %s", f.display, p)
	}
	v := version{sum: sumOf(shown), disk: dsum, buf: bsum, hasBuf: true, state: st}
	return shown, v, bufferNote(st, seen && prev.state != bufLagging), nil
}

// readStreamed selects the window of f from disk with bounded memory.
func readStreamed(ctx context.Context, f file, offset, limit int) (string, int, version, error) {
	fh, err := f.openRead()
	if err != nil {
		return "", 0, version{}, ioErr("read", f.display, err)
	}
	defer fh.Close()
	r, err := streamWindow(ctx, fh, offset, limit)
	switch {
	case err != nil && ctx.Err() != nil:
		return "", 0, version{}, aborted("read", ctx.Err())
	case err != nil:
		return "", 0, version{}, ioErr("read", f.display, err)
	case r.problem != "":
		return "", 0, version{}, fsErr(CodeNotText, "cannot read %q: %s", f.display, r.problem)
	}
	return r.body, r.total, version{sum: r.sum, disk: r.sum}, nil
}

// presentReadCall is the pending card: "Read <file_path>" with the window
// suffix " (O - O+L-1)" (limit given and positive), else " (from line O)"
// (offset given), kind read, one location at the first line read.
func presentReadCall(a ReadArgs) tools.ToolCallView {
	if strings.TrimSpace(a.FilePath) == "" {
		return nil
	}
	title := "Read " + a.FilePath
	o := 1.0
	if a.Offset != nil {
		o = *a.Offset
	}
	switch {
	case a.Limit != nil && *a.Limit > 0:
		title += " (" + jsNumber(o) + " - " + jsNumber(o+*a.Limit-1) + ")"
	case a.Offset != nil:
		title += " (from line " + jsNumber(o) + ")"
	}
	line := 1
	if a.Offset != nil && isPositiveInt(*a.Offset) && *a.Offset <= math.MaxInt32 {
		line = int(*a.Offset)
	}
	return tools.GenericCall{Title: title, Kind: tools.KindRead, Locations: []tools.FileLocation{{Path: a.FilePath, Line: line}}}
}

// presentReadStart is the card of a read whose arguments are still
// streaming, from the moment the path is complete: the call card of what
// is known so far, its location without a line until an offset is known
// (the line would otherwise claim 1 before the offset has streamed).
func presentReadStart(a ReadArgs) tools.ToolCallView {
	v, ok := presentReadCall(a).(tools.GenericCall)
	if !ok {
		return nil
	}
	if a.Offset == nil {
		v.Locations[0].Line = 0
	}
	return v
}
