package acp

// The method names of ACP v1, as the schema's `x-method` gives them.
// Methods the editor calls on the agent (x-side "agent"):
const (
	MethodInitialize             = "initialize"
	MethodAuthenticate           = "authenticate"
	MethodLogout                 = "logout"
	MethodSessionNew             = "session/new"
	MethodSessionLoad            = "session/load"
	MethodSessionList            = "session/list"
	MethodSessionDelete          = "session/delete"
	MethodSessionResume          = "session/resume"
	MethodSessionClose           = "session/close"
	MethodSessionSetMode         = "session/set_mode"
	MethodSessionSetConfigOption = "session/set_config_option"
	MethodSessionPrompt          = "session/prompt"
	// MethodSessionCancel is a notification.
	MethodSessionCancel = "session/cancel"
	// MethodSessionFork is in the unstable schema only.
	MethodSessionFork = "session/fork"
	// MethodSessionSetTitle is in the unstable schema only.
	MethodSessionSetTitle = "session/set_title"
)

// Methods the agent calls on the editor (x-side "client"):
const (
	// MethodSessionUpdate is a notification.
	MethodSessionUpdate            = "session/update"
	MethodSessionRequestPermission = "session/request_permission"
	MethodFSReadTextFile           = "fs/read_text_file"
	MethodFSWriteTextFile          = "fs/write_text_file"
	MethodTerminalCreate           = "terminal/create"
	MethodTerminalOutput           = "terminal/output"
	MethodTerminalRelease          = "terminal/release"
	MethodTerminalWaitForExit      = "terminal/wait_for_exit"
	MethodTerminalKill             = "terminal/kill"
	MethodElicitationCreate        = "elicitation/create"
	// MethodElicitationComplete is a notification.
	MethodElicitationComplete = "elicitation/complete"
)

// MethodCancelRequest is the protocol-level notification that cancels a
// request in flight (x-side "protocol"), either way.
const MethodCancelRequest = "$/cancel_request"
