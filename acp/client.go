package acp

import "context"

// Client is what an agent can ask of the editor (the schema's x-side
// "client" methods). [Conn] implements it; [NewAgentConn] hands it to
// the agent. The calls return the editor's *Error when it answers with
// one, ctx's error when ctx ends first (the editor is told with
// `$/cancel_request`), and an error when the connection is closed or
// shutting down.
type Client interface {
	// SessionUpdate sends a `session/update` notification. It returns
	// once the line is written; ctx is not consulted (a message is
	// written whole, so final updates after a cancel still go out).
	SessionUpdate(ctx context.Context, n SessionNotification) error
	// RequestPermission asks the user whether a tool call may run
	// (`session/request_permission`).
	RequestPermission(ctx context.Context, p RequestPermissionRequest) (RequestPermissionResponse, error)
	// ReadTextFile reads a file as the editor has it, unsaved changes
	// included (`fs/read_text_file`).
	ReadTextFile(ctx context.Context, p ReadTextFileRequest) (ReadTextFileResponse, error)
	// WriteTextFile replaces a file's text in the editor
	// (`fs/write_text_file`).
	WriteTextFile(ctx context.Context, p WriteTextFileRequest) (WriteTextFileResponse, error)
	// CreateElicitation asks the user for input (`elicitation/create`).
	CreateElicitation(ctx context.Context, p CreateElicitationRequest) (CreateElicitationResponse, error)
	// CompleteElicitation tells the editor a URL elicitation is done (the
	// `elicitation/complete` notification; ctx as for SessionUpdate).
	CompleteElicitation(ctx context.Context, n CompleteElicitationNotification) error
}

var _ Client = (*Conn)(nil)

// SessionUpdate implements Client.
func (c *Conn) SessionUpdate(_ context.Context, n SessionNotification) error {
	return c.stream.writeNotification(MethodSessionUpdate, &n, nil)
}

// RequestPermission implements Client.
func (c *Conn) RequestPermission(ctx context.Context, p RequestPermissionRequest) (RequestPermissionResponse, error) {
	return call[RequestPermissionResponse](ctx, c, MethodSessionRequestPermission, p)
}

// ReadTextFile implements Client.
func (c *Conn) ReadTextFile(ctx context.Context, p ReadTextFileRequest) (ReadTextFileResponse, error) {
	return call[ReadTextFileResponse](ctx, c, MethodFSReadTextFile, p)
}

// WriteTextFile implements Client.
func (c *Conn) WriteTextFile(ctx context.Context, p WriteTextFileRequest) (WriteTextFileResponse, error) {
	return call[WriteTextFileResponse](ctx, c, MethodFSWriteTextFile, p)
}

// CreateElicitation implements Client.
func (c *Conn) CreateElicitation(ctx context.Context, p CreateElicitationRequest) (CreateElicitationResponse, error) {
	return call[CreateElicitationResponse](ctx, c, MethodElicitationCreate, p)
}

// CompleteElicitation implements Client.
func (c *Conn) CompleteElicitation(_ context.Context, n CompleteElicitationNotification) error {
	return c.Notify(MethodElicitationComplete, n)
}

// call is Conn.Call with a typed result.
func call[R any](ctx context.Context, c *Conn, method string, params any) (R, error) {
	var r R
	err := c.Call(ctx, method, params, &r)
	return r, err
}
