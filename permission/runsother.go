package permission

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/dsh-acp/dsh-acp/tools"
)

// optionRule is what, in one program's arguments, makes it run code
// other than what its prefix names (a shell, a program or a file of
// rules the argument gives): a command carrying one is never covered by
// a remembered prefix, since the user approved the prefix, not that.
type optionRule struct {
	// long are long option names (without dashes) matched as "--name",
	// "--name=VALUE" (the value may follow as the next word).
	long []string
	// single: the program's flag parser takes a long option with one
	// dash too (Go's flag package: "-exec", "-exec=VALUE").
	single bool
	// abbrev: the parser takes a long option by a prefix of its name
	// (GNU getopt_long, npm's nopt, git's parse-options): "--ev" is
	// "--eval". A word "--PREFIX" of two letters or more that begins a
	// name of long counts.
	abbrev bool
	// short are option letters matched anywhere in a one-dash word
	// ("-f", "-sf", "-fFILE"): a letter grouped with others or carrying
	// its value still counts.
	short string
	// assign: an argument NAME=VALUE (make's variable assignments: any
	// variable may be a recipe's command or its shell) counts.
	assign bool
	// words are plain arguments that run a command (git submodule
	// foreach CMD, find -exec).
	words []string
	// atVersion: an argument naming a module query (PATH@VERSION)
	// downloads code and builds or runs it (go run, go install, go get).
	atVersion bool
	// keys: the program's first argument, without a dash, is a group of
	// its short options (tar's old style: "tar xIf PROG a.tar").
	keys bool
}

// runsOtherRules are the per-program rules (see optionRule), by command
// name or by two-word prefix; a command is judged by both its name's
// rule and its prefix's. Every program a remembered prefix may start
// with that can be told to run other code by an option is listed; a
// program that runs another command as its job (runners) is never
// remembered at all.
var runsOtherRules = map[string]optionRule{
	// GNU make: another makefile, directory or include folder, an
	// --eval'd rule, and any variable (SHELL=, .SHELLFLAGS=, MAKE=, a
	// recipe's $(CC)) given on the command line.
	"make": {long: []string{"eval", "file", "makefile", "directory", "include-dir", "environment-overrides"},
		abbrev: true, short: "fECIe", assign: true},
	// go: a program run for each test binary or tool, a file overlay, an
	// alternate go.mod, a vet tool, settings written for later commands
	// (go env -w), and module queries (downloaded code).
	"go": {long: []string{"exec", "toolexec", "overlay", "modfile", "vettool", "w"}, single: true, atVersion: true},
	// cargo: configuration values (target.X.runner, build.rustc-wrapper)
	// and unstable flags (-Z), which can name programs.
	"cargo": {long: []string{"config"}, short: "Z"},
	// npm and its relatives: node's own options (--require), the shell
	// scripts run in, another package folder or configuration file; npx
	// and exec: the package to run, a command.
	"npm":  {long: npmLong, abbrev: true, short: "cp"},
	"npx":  {long: npmLong, abbrev: true, short: "cp"},
	"pnpm": {long: append([]string{"dir"}, npmLong...), abbrev: true, short: "Ccp"},
	"yarn": {long: append([]string{"cwd"}, npmLong...), abbrev: true},
	// git: configuration on the command line, another git, repository or
	// work tree, the programs run on the other side of a transport,
	// templates (hooks), external diff and text conversion programs, a
	// pager; per subcommand: rebase --exec/-x, difftool's command, the
	// upload-pack program of ls-remote and clone (-u), clone's -c, the
	// commands of submodule foreach and bisect run, grep's pager (-O),
	// send-email's sendmail and filter-branch's filters.
	"git": {long: []string{"config-env", "exec-path", "git-dir", "work-tree", "upload-pack", "receive-pack", "exec",
		"template", "ext-diff", "textconv", "paginate", "config", "extcmd", "tool"}, abbrev: true},
	"git rebase":     {short: "x"},
	"git difftool":   {short: "xt"},
	"git mergetool":  {short: "t"},
	"git ls-remote":  {short: "u"},
	"git clone":      {short: "uc"},
	"git submodule":  {words: []string{"foreach"}},
	"git bisect":     {words: []string{"run"}},
	"git grep":       {long: []string{"open-files-in-pager"}, abbrev: true, short: "O"},
	"git send-email": {long: []string{"sendmail-cmd"}, abbrev: true},
	"git filter-branch": {long: []string{"setup", "env-filter", "tree-filter", "index-filter", "parent-filter", "msg-filter",
		"commit-filter", "tag-name-filter"}},
	// find runs commands for the files it finds.
	"find": {words: []string{"-exec", "-execdir", "-ok", "-okdir"}},
	// Shells and interpreters given code on the command line (or on
	// stdin, or a start-up file) rather than a file of the project.
	"sh":      {short: "cs", long: []string{"init-file", "rcfile"}},
	"bash":    {short: "cs", long: []string{"init-file", "rcfile"}},
	"zsh":     {short: "cs"},
	"dash":    {short: "cs"},
	"ksh":     {short: "cs"},
	"fish":    {short: "cC", long: []string{"command", "init-command"}},
	"python":  {short: "c"},
	"python3": {short: "c"},
	"node":    {long: []string{"eval", "print", "require", "import", "loader", "experimental-loader"}, short: "epr"},
	"perl":    {short: "eE"},
	"ruby":    {short: "e"},
	// tar: a program the members are piped to, a compression program,
	// checkpoint actions and the volume scripts, a remote shell.
	"tar": {long: []string{"to-command", "use-compress-program", "checkpoint-action", "info-script", "new-volume-script",
		"rsh-command", "rmt-command"}, abbrev: true, short: "IF", keys: true},
	// sort: the program that compresses its temporary files.
	"sort": {long: []string{"compress-program"}, abbrev: true},
	// ripgrep: a preprocessor run on every file searched.
	"rg": {long: []string{"pre"}},
	// fd: a command run on the files found.
	"fd": {long: []string{"exec", "exec-batch"}, short: "xX"},
	// rsync: the remote shell and the program run on the other side.
	"rsync": {long: []string{"rsh", "rsync-path"}, abbrev: true, short: "e"},
	// scp: the program to connect with, ssh options (ProxyCommand) and
	// an ssh configuration file.
	"scp": {short: "SoF"},
	// zip: the command that tests the archive.
	"zip": {long: []string{"unzip-command"}, abbrev: true, short: "T"},
	// man: the pager and the browser.
	"man": {long: []string{"pager", "html"}, abbrev: true, short: "PH"},
}

// npmLong are the long options of npm, npx, pnpm and yarn that make
// them run other code.
var npmLong = []string{"node-options", "script-shell", "prefix", "userconfig", "globalconfig", "shell", "call", "package"}

// runners are commands whose job is to run another command (or code)
// given in their arguments: remembering their prefix would allow every
// command, so a remembered prefix never covers them and Remember does
// not store them. Two-word entries are prefixes (npm exec).
var runners = map[string]bool{
	"env": true, "xargs": true, "sudo": true, "doas": true, "su": true, "runuser": true, "nohup": true,
	"timeout": true, "nice": true, "ionice": true, "time": true, "exec": true, "eval": true, "command": true,
	"builtin": true, "watch": true, "strace": true, "ltrace": true, "chroot": true, "unshare": true,
	"setsid": true, "stdbuf": true, "flock": true, "parallel": true, "script": true, "busybox": true,
	"awk": true, "gawk": true, "mawk": true, "trap": true,
	// sed's scripts run commands (e, s///e) and write files (w): the
	// script is code, like awk's.
	"sed": true, "gsed": true,
	// ssh runs a command on another host (and -o ProxyCommand, a
	// local one).
	"ssh":      true,
	"npm exec": true, "npm x": true, "pnpm exec": true, "pnpm dlx": true, "yarn dlx": true, "yarn exec": true,
	"yarn node": true, "npx": true,
	// git's top-level options before the subcommand make the prefix
	// itself "git -c", "git -C": never a prefix to remember.
	"git -c": true, "git -C": true, "git --exec-path": true, "git --git-dir": true, "git --work-tree": true,
	"git --config-env": true, "git -p": true, "git --paginate": true,
	// git config writes the settings that name the programs later gits
	// run (core.fsmonitor, core.pager, aliases), the user's own included.
	"git config": true,
}

// isRunner reports whether a command with this name and prefix runs
// another command as its job. A prefix whose second word is an option
// ("git --exec-path=x") is judged by the option's name.
func isRunner(name, prefix string) bool {
	if runners[name] || runners[prefix] {
		return true
	}
	if opt, _, ok := strings.Cut(prefix, "="); ok {
		return runners[opt]
	}
	return false
}

// runsOther returns the first argument of c (after its prefix's words)
// that makes it run other code by the rules of its name and prefix,
// and whether there is one.
func runsOther(c *syntax.CallExpr, name, prefix string, words int) (string, bool) {
	rules := []optionRule{runsOtherRules[name]}
	if prefix != name {
		rules = append(rules, runsOtherRules[prefix])
	}
	for _, a := range c.Args[words:] {
		v := valueOf(a)
		for _, r := range rules {
			if r.matches(v.text) {
				return v.text, true
			}
		}
	}
	if len(c.Args) > 1 {
		v := valueOf(c.Args[1])
		for _, r := range rules {
			if r.keys && !strings.HasPrefix(v.text, "-") && strings.ContainsAny(v.text, r.short) {
				return v.text, true
			}
		}
	}
	return "", false
}

// matches reports whether the argument text w carries an option or
// assignment of r.
func (r optionRule) matches(w string) bool {
	for _, x := range r.words {
		if w == x {
			return true
		}
	}
	if r.atVersion && !strings.HasPrefix(w, "-") && strings.Contains(w, "@") {
		return true
	}
	if r.assign && !strings.HasPrefix(w, "-") {
		if name, _, ok := strings.Cut(w, "="); ok && name != "" {
			return true
		}
	}
	switch {
	case strings.HasPrefix(w, "--"):
		return r.long2(w[2:])
	case strings.HasPrefix(w, "-") && len(w) > 1:
		if r.single && r.long2(w[1:]) {
			return true
		}
		return strings.ContainsAny(w[1:], r.short)
	}
	return false
}

// long2 reports whether opt (an option word without its dashes, maybe
// with "=VALUE") names one of r.long, or abbreviates one where r.abbrev.
func (r optionRule) long2(opt string) bool {
	name, _, _ := strings.Cut(opt, "=")
	if name == "" {
		return false
	}
	for _, l := range r.long {
		if name == l || r.abbrev && len(name) >= 2 && strings.HasPrefix(l, name) {
			return true
		}
	}
	return false
}

// otherArg is an argument that makes the command of prefix run other
// code, as bash passes it.
type otherArg struct{ prefix, arg string }

// CommandNotes returns, for the permission request of c (a ClassExecute
// call; nil for others), one sentence each: every argument that makes
// its program run other code (saying so when its prefix is allowed
// always, since that is why the call asks again) and every command
// whose job is to run another.
func (m *Memory) CommandNotes(c Call) []string {
	if c.Class != tools.ClassExecute || c.Command == "" {
		return nil
	}
	f := analyzeBash(c.Command, newScope(c.Cwd, c.Dir))
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, o := range f.others {
		s := "`" + o.arg + "` makes `" + o.prefix + "` run other code"
		if allowed, known := m.prefixes[o.prefix]; known && allowed {
			s = "`" + o.prefix + "` is allowed always, but " + s + ", which that does not cover"
		}
		out = append(out, s+".")
	}
	for _, p := range f.runners {
		out = append(out, "`"+p+"` runs the command it is given: it is never remembered.")
	}
	return out
}

// RememberedPrefixes returns the command prefixes an "always" answer to
// c would store (Remember), in order; nil for a call that is not a
// command or whose text cannot be judged.
func RememberedPrefixes(c Call) []string {
	if c.Class != tools.ClassExecute {
		return nil
	}
	return analyzeBash(c.Command, newScope(c.Cwd, c.Dir)).rememberable()
}
