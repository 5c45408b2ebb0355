package toolfs

import (
	"context"
	"encoding/base64"
	"io"
	"io/fs"

	"github.com/dsh-acp/dsh-acp/tools"
)

// readImage is `read` of an image file inside the project: a PNG, JPEG,
// GIF or WebP file (told by its first bytes, not its name) is returned
// as the image itself (tools.Image) inside the read envelope with
// <type>image</type>; the agent sends it to a model that takes images
// and a line such as "[image: 640×480 PNG, 31 KiB — model takes no
// images]" to one that does not. ok is false for any other
// file, and for files outside the project (which stay refused as binary:
// the permission to read them outside was asked for text). An image
// over tools.MaxToolImageBytes is FS_NOT_TEXT with the reason.
func readImage(ctx context.Context, f file, info fs.FileInfo) (out tools.Output, ok bool, err error) {
	if f.root == "" || !info.Mode().IsRegular() {
		return tools.Output{}, false, nil
	}
	fh, err := f.openRead()
	if err != nil {
		return tools.Output{}, false, nil // the text path reports it
	}
	defer fh.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(fh, head)
	mime := tools.SniffImage(head[:n])
	if mime == "" {
		return tools.Output{}, false, nil
	}
	if err := ctx.Err(); err != nil {
		return tools.Output{}, true, aborted("read", err)
	}
	if info.Size() > tools.MaxToolImageBytes {
		return tools.Output{}, true, fsErr(CodeNotText, "cannot read %q: a %s image of %d MiB, more than the %d MiB an image may have for the model", f.display, mime, (info.Size()+1<<19)>>20, tools.MaxToolImageBytes>>20)
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return tools.Output{}, true, ioErr("read", f.display, err)
	}
	data, err := io.ReadAll(io.LimitReader(fh, tools.MaxToolImageBytes+1))
	if err != nil {
		return tools.Output{}, true, ioErr("read", f.display, err)
	}
	if len(data) > tools.MaxToolImageBytes {
		return tools.Output{}, true, fsErr(CodeNotText, "cannot read %q: a %s image of more than the %d MiB an image may have for the model", f.display, mime, tools.MaxToolImageBytes>>20)
	}
	img := tools.Image(base64.StdEncoding.EncodeToString(data), mime)
	env := "<path>" + f.display + "</path>\n<type>image</type>\n<content>\n"
	return tools.Output{Content: []tools.Content{tools.Text(env), img, tools.Text("\n</content>")}}, true, nil
}
