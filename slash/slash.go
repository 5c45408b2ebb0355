// Package slash holds the slash commands a session offers the editor
// (ACP available_commands_update): the built-in ones (/compact, /init,
// /review) and the user's own, Markdown files read from the project's
// .dsh/commands/ and the user's $XDG_CONFIG_HOME/dsh-acp/commands/. It
// parses a prompt that starts with a command and builds the prompt the
// command stands for; the bridge runs the turn.
//
// A user command file NAME.md is the command /NAME. Its whole body,
// after an optional front matter (a first line "---", lines, a line
// "---"), is the prompt, with every "$ARGUMENTS" replaced by the text
// typed after the command (appended on a paragraph of its own when the
// body has no "$ARGUMENTS" and something was typed, so the model sees
// it). The description shown is the front matter's "description:"
// line, else the body's first non-empty line (which stays part of the
// prompt). A project file wins over a user file of the same name;
// neither may take a built-in's name (the clash is reported and the
// file left out). Only the folders' own *.md files count (no
// subfolders); a name must be letters, digits, '.', '_', '-' or ':'.
package slash

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// The built-in commands' names.
const (
	Compact = "compact"
	Init    = "init"
	Review  = "review"
	Undo    = "undo"
)

// Command is one slash command.
type Command struct {
	// Name is the command without its slash ("review").
	Name string
	// Description is what the editor shows beside it (one line).
	Description string
	// Hint, when set, says the command takes text after its name, and
	// is shown while none is typed (ACP UnstructuredCommandInput).
	Hint string
	// Builtin marks the agent's own commands; Body and Path are a user
	// command's prompt template and file.
	Builtin bool
	Body    string
	Path    string
}

// Builtins are the built-in commands, in the order they are offered.
func Builtins() []Command {
	return []Command{
		{Name: Compact, Builtin: true, Hint: "what the summary should focus on (optional)",
			Description: "Summarize the conversation so far; later requests carry the summary instead of the old messages"},
		{Name: Init, Builtin: true, Hint: "what else AGENTS.md should cover (optional)",
			Description: "Write or update AGENTS.md, the instructions for agents working on this project"},
		{Name: Review, Builtin: true, Hint: "what to look at (optional)",
			Description: "Review the uncommitted changes (git status and git diff), read-only"},
		{Name: Undo, Builtin: true,
			Description: "Put the files back as they were before the last turn that changed them (again: one more turn back)"},
	}
}

// Dirs are the folders user commands are read from; "" leaves one out.
type Dirs struct {
	// Project is the project's folder (ProjectDir); its files win.
	Project string
	// User is the user's folder (UserDir).
	User string
}

// ProjectDir is the folder of a project's commands: cwd/.dsh/commands.
func ProjectDir(cwd string) string { return filepath.Join(cwd, ".dsh", "commands") }

// UserDir is the folder of the user's commands: configHome/dsh-acp/commands,
// configHome being $XDG_CONFIG_HOME (else ~/.config).
func UserDir(configHome string) string { return filepath.Join(configHome, "dsh-acp", "commands") }

// Set is the commands a session offers: the built-ins, then the user's
// in name order. The zero value is not usable; build one with Load.
type Set struct {
	list   []Command
	byName map[string]Command
	// Fingerprint is what Fingerprint said of the folders when they were
	// read.
	Fingerprint string
}

// Commands returns the commands in offer order.
func (s *Set) Commands() []Command { return slices.Clone(s.list) }

// Lookup returns the command called name.
func (s *Set) Lookup(name string) (Command, bool) {
	c, ok := s.byName[name]
	return c, ok
}

// maxFileBytes bounds a command file, in bytes: a larger one is left out
// (reported).
const maxFileBytes = 1 << 20

// maxDescriptionRunes bounds a description, in runes ("…" included).
const maxDescriptionRunes = 120

// Load reads the user commands of dirs and returns the set with the
// built-ins. What it leaves out (a name that clashes with a built-in, a
// file that cannot be read or is too big, a bad name) is returned as
// one sentence each, for the caller to log; a folder that does not exist
// is no problem.
func Load(dirs Dirs) (*Set, []string) {
	s := &Set{byName: map[string]Command{}, Fingerprint: Fingerprint(dirs)}
	for _, c := range Builtins() {
		s.list = append(s.list, c)
		s.byName[c.Name] = c
	}
	var problems []string
	user := map[string]Command{}
	// The user's folder first, so the project's files replace its
	// commands of the same name.
	for _, dir := range []string{dirs.User, dirs.Project} {
		if dir == "" {
			continue
		}
		for _, path := range commandFiles(dir) {
			name := strings.TrimSuffix(filepath.Base(path), ".md")
			if !validName(name) {
				problems = append(problems, fmt.Sprintf("command file %s left out: a command name may hold only letters, digits, '.', '_', '-' and ':'", path))
				continue
			}
			if b, ok := s.byName[name]; ok && b.Builtin {
				problems = append(problems, fmt.Sprintf("command file %s left out: /%s is a built-in command", path, name))
				continue
			}
			c, err := readCommand(name, path)
			if err != nil {
				problems = append(problems, fmt.Sprintf("command file %s left out: %v", path, err))
				continue
			}
			user[name] = c
		}
	}
	names := make([]string, 0, len(user))
	for n := range user {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		s.list = append(s.list, user[n])
		s.byName[n] = user[n]
	}
	return s, problems
}

// commandFiles lists dir's *.md regular files (links followed), by name.
func commandFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".md") || e.Name() == ".md" {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			out = append(out, path)
		}
	}
	return out
}

// Fingerprint describes the *.md files of dirs' folders (names, sizes,
// modification times): it changes when a command file is added,
// removed or edited. It costs one directory read and a stat per file.
func Fingerprint(dirs Dirs) string {
	var b strings.Builder
	for _, dir := range []string{dirs.Project, dirs.User} {
		b.WriteString(dir)
		b.WriteByte(0)
		if dir == "" {
			continue
		}
		for _, path := range commandFiles(dir) {
			st, err := os.Stat(path)
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "%s\x00%d\x00%d\x00", filepath.Base(path), st.Size(), st.ModTime().UnixNano())
		}
	}
	return b.String()
}

func validName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

// readCommand reads a command file.
func readCommand(name, path string) (Command, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Command{}, err
	}
	if st.Size() > maxFileBytes {
		return Command{}, fmt.Errorf("it is larger than %d KiB", maxFileBytes>>10)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return Command{}, err
	}
	if !utf8.Valid(raw) {
		return Command{}, fmt.Errorf("it is not UTF-8 text")
	}
	desc, body := parseFile(string(raw))
	if strings.TrimSpace(body) == "" {
		return Command{}, fmt.Errorf("it has no prompt (the body after the front matter is empty)")
	}
	if desc == "" {
		desc = firstLine(body)
	}
	c := Command{Name: name, Description: oneLine(desc), Body: body, Path: path}
	if strings.Contains(body, Arguments) {
		c.Hint = "arguments"
	}
	return c, nil
}

// parseFile splits a command file into its front matter's description
// ("" when none) and its body. Front matter is present when the first
// line is "---" and a later line is "---"; otherwise the whole file is
// the body.
func parseFile(text string) (desc, body string) {
	text = strings.TrimPrefix(strings.ReplaceAll(text, "\r\n", "\n"), "\ufeff")
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || strings.TrimSpace(first) != "---" {
		return "", text
	}
	sc := bufio.NewScanner(strings.NewReader(rest))
	sc.Buffer(nil, maxFileBytes+1)
	n := len(first) + 1
	for sc.Scan() {
		line := sc.Text()
		n += len(line) + 1
		if strings.TrimSpace(line) == "---" {
			return desc, strings.TrimPrefix(text[min(n, len(text)):], "\n")
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "description" {
			desc = unquote(strings.TrimSpace(v))
		}
	}
	return "", text // no closing line: not front matter
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

func firstLine(body string) string {
	for l := range strings.SplitSeq(body, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return strings.TrimSpace(strings.TrimLeft(l, "#"))
		}
	}
	return ""
}

// oneLine is s on one line, cut at maxDescriptionRunes runes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxDescriptionRunes {
		s = string([]rune(s)[:maxDescriptionRunes-1]) + "…"
	}
	return s
}

// Arguments is the placeholder a user command's body holds for the text
// typed after the command.
const Arguments = "$ARGUMENTS"

// Expand returns a user command's prompt for the text typed after it:
// its body with every Arguments replaced by args; when the body has no
// Arguments and args is not empty, args follows the body on a paragraph
// of its own.
func (c Command) Expand(args string) string {
	if strings.Contains(c.Body, Arguments) {
		return strings.ReplaceAll(c.Body, Arguments, args)
	}
	if args == "" {
		return c.Body
	}
	return strings.TrimRight(c.Body, "\n") + "\n\n" + args
}

// Parse reads a prompt's text as a slash command: "/NAME" at its start
// (blanks before it allowed), then nothing or a blank and the command's
// text (args, without the blanks around it). ok is false when text does
// not start that way; whether NAME is a command is the caller's
// question (an unknown one goes to the model as it is).
func Parse(text string) (name, args string, ok bool) {
	t := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	t = t[1:]
	end := strings.IndexFunc(t, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	if end < 0 {
		end = len(t)
	}
	name = t[:end]
	if !validName(name) {
		return "", "", false
	}
	return name, strings.TrimSpace(t[end:]), true
}
