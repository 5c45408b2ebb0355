package bridge

import (
	"context"

	"github.com/dsh-acp/dsh-acp/acp"
)

// editor is a session's tools.Editor: fs/read_text_file and
// fs/write_text_file on the connected client, limited to what the client
// advertised.
type editor struct {
	client    Client
	sessionID string
	caps      acp.FileSystemCapabilities
}

func (e *editor) CanRead() bool  { return e.caps.ReadTextFile }
func (e *editor) CanWrite() bool { return e.caps.WriteTextFile }

// ReadTextFile asks the editor for the whole text of path (absolute),
// unsaved changes included.
func (e *editor) ReadTextFile(ctx context.Context, path string) (string, error) {
	var res acp.ReadTextFileResponse
	if err := e.client.Call(ctx, "fs/read_text_file", acp.ReadTextFileRequest{SessionID: e.sessionID, Path: path}, &res); err != nil {
		return "", err
	}
	return res.Content, nil
}

// WriteTextFile asks the editor to replace path's text with content.
func (e *editor) WriteTextFile(ctx context.Context, path, content string) error {
	return e.client.Call(ctx, "fs/write_text_file", acp.WriteTextFileRequest{SessionID: e.sessionID, Path: path, Content: content}, nil)
}
