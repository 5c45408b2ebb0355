package bridge

import (
	"context"

	"github.com/dsh-acp/dsh-acp/acp"
)

// editor is a session's tools.Editor: fs/read_text_file and
// fs/write_text_file on the connected client, limited to what the client
// advertised.
type editor struct {
	client    acp.Client
	sessionID string
	caps      acp.FileSystemCapabilities
}

func (e *editor) CanRead() bool  { return e.caps.ReadTextFile }
func (e *editor) CanWrite() bool { return e.caps.WriteTextFile }

// ReadTextFile asks the editor for the whole text of path (absolute),
// unsaved changes included.
func (e *editor) ReadTextFile(ctx context.Context, path string) (string, error) {
	res, err := e.client.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionID: e.sessionID, Path: path})
	if err != nil {
		return "", err
	}
	return res.Content, nil
}

// WriteTextFile asks the editor to replace path's text with content.
func (e *editor) WriteTextFile(ctx context.Context, path, content string) error {
	_, err := e.client.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionID: e.sessionID, Path: path, Content: content})
	return err
}
