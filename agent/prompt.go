package agent

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// AgentsFileLimit caps how much of the session cwd's AGENTS.md goes into
// the system prompt, in bytes (32 KiB).
const AgentsFileLimit = 32 << 10

// The modes of a ClientPrompt (ACP's SystemPromptMode).
const (
	// ClientAppend adds the client's text to the built-in instructions.
	ClientAppend = "append"
	// ClientOverride replaces the built-in instructions with it.
	ClientOverride = "override"
)

// ClientPrompt is the system-level text the editor gives a session (ACP
// `systemPrompt`): Mode is ClientAppend or ClientOverride, Text the
// text of its content blocks. The zero value is none.
type ClientPrompt struct {
	Mode string `json:"mode"`
	Text string `json:"text"`
}

// SystemPrompt builds the system prompt for a session rooted at cwd
// without a client prompt: SessionSystem(cwd, ClientPrompt{}).
func SystemPrompt(cwd string) string { return SessionSystem(cwd, ClientPrompt{}) }

// SessionSystem builds the system prompt of every model request of a
// session rooted at cwd (its turns, compaction, and any request made on
// the session's behalf): the built-in instructions (who the agent is,
// how to use the tools), the environment (the cwd, the platform, today's
// date), the cwd's AGENTS.md when present (cut at AgentsFileLimit bytes
// on a line boundary, with a note saying so), then client's text. With
// client.Mode ClientAppend the text follows everything under a heading
// of its own; with ClientOverride it takes the built-in instructions'
// place, and the environment and AGENTS.md stay (the tools' own
// descriptions go with every request regardless).
func SessionSystem(cwd string, client ClientPrompt) string {
	var b strings.Builder
	if client.Mode == ClientOverride {
		b.WriteString(strings.TrimRight(client.Text, "\n") + "\n\n")
	} else {
		fmt.Fprintf(&b, "You are dsh-acp, a coding agent working inside the user's editor.\n")
	}
	fmt.Fprintf(&b, "Working directory: %s\nPlatform: %s/%s\nToday's date: %s\n", cwd, runtime.GOOS, runtime.GOARCH, time.Now().Format("2006-01-02"))
	if client.Mode != ClientOverride {
		b.WriteString(builtinInstructions)
	}
	if text, cut := readAgentsFile(cwd); text != "" {
		b.WriteString("\nProject instructions from AGENTS.md:\n")
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
		if cut {
			fmt.Fprintf(&b, "[AGENTS.md was cut at %d KiB]\n", AgentsFileLimit>>10)
		}
	}
	if client.Mode == ClientAppend {
		b.WriteString("\nInstructions from the editor:\n")
		b.WriteString(strings.TrimRight(client.Text, "\n") + "\n")
	}
	return b.String()
}

// builtinInstructions are the agent's own instructions (what a client's
// override replaces).
const builtinInstructions = `
How to work:
- Use the tools to look before you act: read a file before you edit or overwrite it.
- Paths may be absolute or relative to the working directory.
- Prefer edit (exact literal replacement) for changes to existing files; use write to create files or replace them whole.
- Each bash call runs in a fresh shell; use its workdir parameter instead of cd. Give every command a short description.
- To find code, use grep (file contents, RE2 regular expressions) and glob (file paths) rather than grep, rg or find in bash. Independent reads and searches asked for in one response run at the same time.
- When you need a decision or a fact only the user has, ask with ask_user (one question, a few short options when there are clear choices) instead of guessing; do not ask about what the tools can tell you.
- Keep the user informed: say briefly what you are doing and what you found. When you are done, give a short summary.
`

// readAgentsFile returns cwd/AGENTS.md up to AgentsFileLimit bytes, cut
// at the last line break, and whether it was cut.
func readAgentsFile(cwd string) (string, bool) {
	f, err := os.Open(filepath.Join(cwd, "AGENTS.md"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, AgentsFileLimit+1))
	if err != nil {
		return "", false
	}
	if len(buf) <= AgentsFileLimit {
		return string(buf), false
	}
	buf = buf[:AgentsFileLimit]
	if i := strings.LastIndexByte(string(buf), '\n'); i > 0 {
		buf = buf[:i+1]
	}
	return strings.ToValidUTF8(string(buf), ""), true
}
