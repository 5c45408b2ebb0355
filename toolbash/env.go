package toolbash

import (
	"os"

	"github.com/dsh-acp/dsh-acp/sandbox"
)

// forcedEnv is added to every command's environment (replacing any value
// the agent has): no colours, no pagers, a dumb terminal.
var forcedEnv = []string{"NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat"}

// commandEnv returns the environment of a command: environ without the
// secret-named variables (sandbox.CommandEnv), then forcedEnv.
func commandEnv(environ []string) []string {
	return sandbox.CommandEnv(environ, nil, forcedEnv...)
}

// processEnv is the agent's own environment (a variable for tests).
var processEnv = os.Environ
