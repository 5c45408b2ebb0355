package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
// unsaved changes included. An error answer is a *clientError.
func (e *editor) ReadTextFile(ctx context.Context, path string) (string, error) {
	res, err := e.client.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionID: e.sessionID, Path: path})
	if err != nil {
		return "", refused(acp.MethodFSReadTextFile, err)
	}
	return res.Content, nil
}

// WriteTextFile asks the editor to replace path's text with content. An
// error answer is a *clientError.
func (e *editor) WriteTextFile(ctx context.Context, path, content string) error {
	_, err := e.client.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionID: e.sessionID, Path: path, Content: content})
	return refused(acp.MethodFSWriteTextFile, err)
}

// clientError is an fs request the editor answered with a JSON-RPC error.
// Its text is the editor's own words: "the editor
// refused <method>: <message>", where the message is the error's data
// when the editor put the details there (Zed answers -32603 "Internal
// error" with data "Permission denied (os error 13)"), else its message;
// never the bare code. It wraps the *acp.Error.
type clientError struct {
	method string
	err    *acp.Error
}

func (e *clientError) Error() string {
	return "the editor refused " + e.method + ": " + clientMessage(e.err)
}

func (e *clientError) Unwrap() error { return e.err }

// refused makes err a *clientError when it is the editor's error answer
// to method; any other error (nil, a cancelled call, a closed
// connection) is returned as is.
func refused(method string, err error) error {
	var ae *acp.Error
	if err == nil || !errors.As(err, &ae) {
		return err
	}
	return &clientError{method: method, err: ae}
}

// genericMessages are the JSON-RPC messages that say nothing beyond
// their code (the spec's names, as libraries send them).
var genericMessages = map[string]bool{
	"": true, "internal error": true, "invalid params": true, "invalid request": true,
	"method not found": true, "parse error": true, "server error": true,
}

// clientMessage is the text of an editor's error: its message and the
// details found in its data (a string, or the string "message",
// "details", "detail", "reason" or "error" field of an object), the
// message left out when it only names the code. Without either it names
// the code.
func clientMessage(e *acp.Error) string {
	msg := strings.TrimSpace(e.Message)
	details := dataDetails(e.Data)
	generic := genericMessages[strings.ToLower(strings.TrimSuffix(msg, "."))]
	switch {
	case details != "" && (generic || strings.Contains(details, msg)):
		return details
	case details != "" && !strings.Contains(msg, details):
		return msg + ": " + details
	case msg != "":
		return msg
	}
	return fmt.Sprintf("error code %d", e.Code)
}

// dataDetails finds the human-readable part of an error's data.
func dataDetails(data any) string {
	if raw, ok := data.(json.RawMessage); ok {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return ""
		}
		data = v
	}
	switch d := data.(type) {
	case string:
		return strings.TrimSpace(d)
	case map[string]any:
		for _, k := range []string{"message", "details", "detail", "reason", "error"} {
			if s, ok := d[k].(string); ok && strings.TrimSpace(s) != "" {
				return strings.TrimSpace(s)
			}
		}
	}
	return ""
}
