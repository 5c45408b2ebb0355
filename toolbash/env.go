package toolbash

import (
	"os"
	"strings"

	"github.com/dsh-acp/dsh-acp/sandbox"
)

// forcedEnv is added to every command's environment (replacing any value
// the agent has): no colours, no pagers, a dumb terminal.
var forcedEnv = []string{"NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat"}

// commandEnv returns the environment of a command: environ (KEY=value
// entries) without the variables whose name contains KEY, SECRET or TOKEN
// in any case, and without those forcedEnv sets, followed by forcedEnv.
func commandEnv(environ []string) []string {
	out := make([]string, 0, len(environ)+len(forcedEnv))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if secretName(name) || forced(name) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, forcedEnv...)
}

// secretName reports whether an environment variable name looks like it
// holds a credential (the rule every command of the agent's follows).
var secretName = sandbox.SecretName

func forced(name string) bool {
	for _, kv := range forcedEnv {
		if n, _, _ := strings.Cut(kv, "="); n == name {
			return true
		}
	}
	return false
}

// processEnv is the agent's own environment (a variable for tests).
var processEnv = os.Environ
