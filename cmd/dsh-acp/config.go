package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"log/slog"

	"github.com/dsh-acp/dsh-acp/credentials"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/permission"
	"github.com/dsh-acp/dsh-acp/sandbox"
	"github.com/dsh-acp/dsh-acp/server"
)

// version is the agent's version; release builds set it with
// -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// config is the program's configuration: flags win over environment
// variables, which win over the defaults.
type config struct {
	LogLevel slog.Level
	BaseURL  string
	// Provider is the endpoint's API dialect (--provider, else
	// llm.DefaultProvider of BaseURL).
	Provider         llm.Provider
	Model            string
	APIKey           string
	MaxSteps         int
	SubagentDepth    int // how deep subagents may nest (--subagent-depth)
	Mode             string
	Replay           string
	Record           string
	StateDir         string
	LocationLineBase int // -1: per client
	Sandbox          sandbox.Config
	ShowVersion      bool
	// MaxMessageBytes is the largest ACP message read, in bytes.
	MaxMessageBytes int64
	// SpillMax is the output one command may save to its spill files, in
	// bytes; < 0 means no limit (--max-spill-size 0).
	SpillMax int64
	// ModelIdleTimeout ends a model request that sends nothing for that
	// long; 0 means never.
	ModelIdleTimeout time.Duration
	// Thinking is the --thinking level ("" when not given): it offers
	// the thinking option on any endpoint and is the level sessions
	// start in.
	Thinking      string
	ContextWindow int    // --context-window; 0 when not given
	Prices        string // --prices FILE; "" when not given
	// Catalog is the built-in catalog of the endpoint merged with the
	// --prices file.
	Catalog llm.Catalog
	// MCPWait is how long session/new (load, resume, fork) waits for the
	// session's MCP servers; 0 means it answers at once.
	MCPWait time.Duration
	// MCPTrusted are the MCP servers (by name) whose read-only hints the
	// user vouches for (--mcp-trusted).
	MCPTrusted []string
	// SandboxAllowRead are credentials folders commands may read after
	// all (--sandbox-allow-read), "~/" expanded.
	SandboxAllowRead []string
	// Trace is the file every ACP message is written to, redacted
	// ("": none).
	Trace string
	// Command is "login" or "logout" when one was given (before or
	// after the flags), else "".
	Command string
	// NoCheck is `login --no-check`: store the key without asking the
	// endpoint first.
	NoCheck bool
	// Credentials is where `login` stores the key ("" when neither
	// XDG_CONFIG_HOME nor HOME is set: CredentialsErr says so).
	Credentials    string
	CredentialsErr error
	// Env is the environment parseConfig read (the key variables are
	// looked up again at each model request).
	Env func(string) (string, bool)
	// ImageModels are the models that take image input (--model-images).
	ImageModels llm.ImageModels
	// Titles: the model writes each session's title after its first
	// turn (--titles on; never with Replay or Record).
	Titles bool
	// CompactAt is --compact-threshold as a fraction (0: off).
	CompactAt float64
	// PromptQueue is --prompt-queue: prompts a session holds waiting
	// behind its running turn.
	PromptQueue int
	// CommandsDir is the user's slash command folder.
	CommandsDir string
	// LowBalance are the --low-balance amounts by currency code (empty:
	// no balance check).
	LowBalance map[string]float64
	// WebSearchURL and WebFetchURL override the Search and Fetch API
	// endpoints ("" when not given); WebAllowPrivate lets web_fetch
	// reach loopback and private addresses.
	WebSearchURL, WebFetchURL string
	WebAllowPrivate           bool
	// keySeen, when set, is told each key the model client is about to
	// send (main: the trace's redactor learns a key a login stored while
	// the agent runs).
	keySeen func(key string)
}

// modeList is the session modes' ids (permission.Modes),
// comma-separated, for the usage and errors.
func modeList() string {
	ids := make([]string, 0, len(permission.Modes))
	for _, m := range permission.Modes {
		ids = append(ids, m.ID)
	}
	return strings.Join(ids, ", ")
}

// flagValues are the flags whose text parseConfig checks after parsing.
type flagValues struct {
	logLevel, maxSteps, lineBase, sandboxMode, sandboxNet, maxMessage, mcpWait, idle, contextWindow, images *string
	titles, compactAt, provider, lowBalance, subagentDepth, maxSpill                                        *string
	promptQueue, webAllowPrivate                                                                            *string
}

// defineFlags defines every flag on fs, storing into c, with defaults
// from get (the environment, then the built-in default).
func defineFlags(fs *flag.FlagSet, c *config, get func(name, def string) string) flagValues {
	var v flagValues
	v.logLevel = fs.String("log-level", get("DSH_LOG_LEVEL", "warn"), "log level on stderr: debug, info, warn, error; warn (the default) writes only what needs the user's attention, info adds routine events, debug also logs each ACP message's direction, method, id and size (env DSH_LOG_LEVEL)")
	fs.StringVar(&c.BaseURL, "base-url", get("DSH_BASE_URL", "https://api.deepseek.com"), "OpenAI-compatible endpoint; requests go to {URL}/chat/completions (env DSH_BASE_URL)")
	v.provider = fs.String("provider", get("DSH_PROVIDER", ""), "API dialect of the endpoint: deepseek (DeepSeek's catalog and prices, thinking fields, balance, web tools) or openai (a plain OpenAI-compatible endpoint) (default deepseek when the base URL's host is api.deepseek.com, else openai; env DSH_PROVIDER)")
	fs.StringVar(&c.Model, "model", get("DSH_MODEL", "deepseek-flash"), "model name (env DSH_MODEL)")
	v.maxSteps = fs.String("max-steps", get("DSH_MAX_STEPS", "64"), "model requests per prompt turn (env DSH_MAX_STEPS)")
	fs.StringVar(&c.Mode, "mode", get("DSH_MODE", "default"), "session mode new sessions start in: "+modeList()+" (env DSH_MODE)")
	fs.StringVar(&c.Replay, "replay", get("DSH_REPLAY", ""), "answer model requests from DIR/001.sse, 002.sse, ... instead of the network (env DSH_REPLAY)")
	fs.StringVar(&c.Record, "record", get("DSH_RECORD", ""), "also write each model response to DIR/NNN.sse and request to DIR/NNN.request.json (env DSH_RECORD)")
	v.lineBase = fs.String("location-line-base", get("DSH_LOCATION_LINE_BASE", ""), "base of tool-call location lines on the wire, 0 or 1 (default: 0 for Zed, 1 otherwise; env DSH_LOCATION_LINE_BASE)")
	v.sandboxMode = fs.String("sandbox", get("DSH_SANDBOX", string(sandbox.WorkspaceWrite)), "how shell commands are confined: workspace-write, read-only, off (env DSH_SANDBOX)")
	v.sandboxNet = fs.String("sandbox-network", get("DSH_SANDBOX_NETWORK", "allow"), "shell commands' TCP connect and bind under the sandbox: allow or deny (env DSH_SANDBOX_NETWORK)")
	v.maxMessage = fs.String("max-message-size", get("DSH_MAX_MESSAGE_SIZE", "64MiB"), "largest ACP message read, in bytes (suffixes KiB, MiB, GiB); a longer one is refused with an error, never held in memory (env DSH_MAX_MESSAGE_SIZE)")
	v.maxSpill = fs.String("max-spill-size", get("DSH_MAX_SPILL_SIZE", "64MiB"), "output one shell command may save to its spill files, in bytes (suffixes KiB, MiB, GiB); past it the output is still read but no longer saved, and the file ends saying where it was cut; 0: no limit (env DSH_MAX_SPILL_SIZE)")
	v.mcpWait = fs.String("mcp-wait", get("DSH_MCP_WAIT", "2s"), "how long session/new waits at most for the session's MCP servers to start (e.g. 2s; 0: answer at once); slower ones join when ready (env DSH_MCP_WAIT)")
	fs.Func("mcp-trusted", "MCP servers (names, comma-separated) whose readOnlyHint you vouch for: their read-only tools also run in plan mode; other servers' hints count only as claims (env DSH_MCP_TRUSTED)", func(s string) error {
		c.MCPTrusted = splitNames(s)
		return nil
	})
	c.MCPTrusted = splitNames(get("DSH_MCP_TRUSTED", ""))
	fs.Func("sandbox-allow-read", "credentials commands may read after all, comma-separated, among ~/.ssh, ~/.gnupg, ~/.aws, ~/.config/gh, ~/.netrc, ~/.docker/config.json (hidden by default; the agent's own config and state never are; env DSH_SANDBOX_ALLOW_READ)", func(s string) error {
		c.SandboxAllowRead = homePaths(splitNames(s))
		return nil
	})
	c.SandboxAllowRead = homePaths(splitNames(get("DSH_SANDBOX_ALLOW_READ", "")))
	v.titles = fs.String("titles", get("DSH_TITLES", "on"), "on: after a session's first turn one short model request writes its title; off: the first prompt's line stays the title (always off with --replay and --record; env DSH_TITLES)")
	v.compactAt = fs.String("compact-threshold", get("DSH_COMPACT_THRESHOLD", "80"), "percent of the model's context window from which the conversation is compacted into a summary; 0 turns automatic compaction off, /compact still works (env DSH_COMPACT_THRESHOLD)")
	v.promptQueue = fs.String("prompt-queue", get("DSH_PROMPT_QUEUE", "8"), "prompts a session holds while its turn runs: the turn ends at its next step and they run in order, one turn each; one more is refused (env DSH_PROMPT_QUEUE)")
	v.idle = fs.String("model-idle-timeout", get("DSH_MODEL_IDLE_TIMEOUT", "120s"), "give a model request up when the endpoint sends nothing for this long (e.g. 120s, 5m; 0: never); retried like a dropped connection (env DSH_MODEL_IDLE_TIMEOUT)")
	fs.StringVar(&c.Thinking, "thinking", get("DSH_THINKING", ""), "offer the thinking selector (DeepSeek's thinking fields) also on another endpoint, and start sessions at this level: "+strings.Join(server.ThinkingLevels(), ", ")+" (on, the old name, is high; default with --provider deepseek: high; env DSH_THINKING)")
	v.contextWindow = fs.String("context-window", get("DSH_CONTEXT_WINDOW", ""), "context window in tokens of a model the endpoint's list and the known models do not describe (default 128000; env DSH_CONTEXT_WINDOW)")
	fs.StringVar(&c.Prices, "prices", get("DSH_PRICES", ""), "JSON file of model prices (per 1M tokens) and context windows; overrides the built-in table (env DSH_PRICES)")
	v.images = fs.String("model-images", get("DSH_MODEL_IMAGES", ""), "models that take image input besides those known to (with --provider deepseek: deepseek-flash), comma-separated, or * for every model; prompts may carry images only for them (env DSH_MODEL_IMAGES)")
	v.lowBalance = fs.String("low-balance", get("DSH_LOW_BALANCE", "1 USD, 5 CNY"), "with --provider deepseek, the account balance is read once per turn at most, in the background, and a session is told once when it is below these amounts (per currency, comma-separated; 0 or off: never read; env DSH_LOW_BALANCE)")
	fs.StringVar(&c.Trace, "trace", get("DSH_TRACE", ""), "append every ACP message, both ways, to FILE (one JSON line each, secrets redacted), for bug reports (env DSH_TRACE)")
	v.subagentDepth = fs.String("subagent-depth", get("DSH_SUBAGENT_DEPTH", "1"), "how deep subagents may nest: 1, children only; 2, children may start their own; ... (env DSH_SUBAGENT_DEPTH)")
	fs.StringVar(&c.WebSearchURL, "web-search-url", get("DSH_WEB_SEARCH_URL", ""), "web_search's endpoint, a DeepSeek-compatible Search API (default on DeepSeek's API: {origin}/v1/tools/search; none elsewhere, and no web_search; env DSH_WEB_SEARCH_URL)")
	fs.StringVar(&c.WebFetchURL, "web-fetch-url", get("DSH_WEB_FETCH_URL", ""), "web_fetch's endpoint, a DeepSeek-compatible Fetch API (default on DeepSeek's API: {origin}/v1/tools/fetch; elsewhere web_fetch reads pages itself; env DSH_WEB_FETCH_URL)")
	v.webAllowPrivate = fs.String("web-allow-private", get("DSH_WEB_ALLOW_PRIVATE", "0"), "1: web_fetch may reach loopback, private and link-local addresses (refused by default; env DSH_WEB_ALLOW_PRIVATE)")
	fs.BoolVar(&c.ShowVersion, "version", false, "print the version and whether the sandbox is active, and exit (also: dsh-acp version)")
	return v
}

// printUsage writes the usage: the commands and every flag, with the
// defaults the environment gives them.
func printUsage(w io.Writer, env func(string) (string, bool)) {
	fs := flag.NewFlagSet("dsh-acp", flag.ContinueOnError)
	fs.SetOutput(w)
	defineFlags(fs, &config{}, envGetter(env))
	fmt.Fprintf(w, "dsh-acp %s: a coding agent for editors that speak the Agent Client Protocol.\n\n", version)
	fmt.Fprintf(w, "Usage:\n  dsh-acp [flags]          serve ACP on stdin/stdout\n  dsh-acp demo             run a recorded demo turn (no API key, no network)\n  dsh-acp diff OLD NEW     print the hunks edit cards would show\n  dsh-acp version          print the version and the sandbox's state\n  dsh-acp login            store the API key for the endpoint (asks in the terminal;\n                           --no-check: without asking GET /models first)\n  dsh-acp logout           remove the stored API key\n  dsh-acp help             print this help\n\nFlags (one dash works too: -max-steps 8):\n")
	printFlags(w, fs)
	fmt.Fprintf(w, "\nEnvironment: DSH_API_KEY (or DEEPSEEK_API_KEY) is the API key, else the one\n`dsh-acp login` stored; DSH_STATE_DIR the session state directory.\n")
}

// envGetter returns env's value of name when set and not empty, else def.
func envGetter(env func(string) (string, bool)) func(name, def string) string {
	return func(name, def string) string {
		if v, ok := env(name); ok && v != "" {
			return v
		}
		return def
	}
}

// parseConfig reads args (without the program name) and env (a lookup
// function, e.g. os.LookupEnv). For --help it prints nothing and returns
// flag.ErrHelp (the caller prints the usage to stdout); for a bad flag it
// prints the error and a pointer to --help to stderr and returns
// errReported.
func parseConfig(args []string, env func(string) (string, bool), stderr io.Writer) (config, error) {
	get := envGetter(env)
	c := config{LocationLineBase: -1}
	fs := flag.NewFlagSet("dsh-acp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, where it belongs
	v := defineFlags(fs, &c, get)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		// The flag package has said what is wrong on a line of its own;
		// a pointer to the help, not all of it, follows.
		fmt.Fprintln(stderr, "Run 'dsh-acp --help' for the commands, flags and variables.")
		return c, errReported
	}
	if fs.NArg() == 1 && (fs.Arg(0) == "login" || fs.Arg(0) == "logout") {
		c.Command = fs.Arg(0)
	} else if fs.NArg() == 2 && fs.Arg(0) == "login" && isNoCheck(fs.Arg(1)) {
		c.Command, c.NoCheck = "login", true
	} else if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (run 'dsh-acp --help' for the commands, flags and variables)", fs.Arg(0))
	}
	for _, check := range []func(*config, flagValues) error{checkLogging, checkSession, checkSandbox, checkLimits, checkModel} {
		if err := check(&c, v); err != nil {
			return c, err
		}
	}
	c.APIKey = get("DSH_API_KEY", get("DEEPSEEK_API_KEY", ""))
	c.Env = env
	c.Credentials, c.CredentialsErr = credentials.DefaultPath(func(k string) string { return get(k, "") })
	c.StateDir = stateDir(get)
	c.CommandsDir = commandsDir(get)
	return c, nil
}

// isNoCheck reports whether arg is login's --no-check (or -no-check),
// which only login takes: it follows the subcommand.
func isNoCheck(arg string) bool { return arg == "--no-check" || arg == "-no-check" }

// commandsDir is the user's slash command folder:
// $XDG_CONFIG_HOME/dsh-acp/commands, else ~/.config/dsh-acp/commands
// ("" when neither is known).
func commandsDir(get func(string, string) string) string {
	if x := get("XDG_CONFIG_HOME", ""); x != "" {
		return filepath.Join(x, "dsh-acp", "commands")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "dsh-acp", "commands")
}

// stateDir is DSH_STATE_DIR, else $XDG_STATE_HOME/dsh-acp, else
// ~/.local/state/dsh-acp.
func stateDir(get func(string, string) string) string {
	if d := get("DSH_STATE_DIR", ""); d != "" {
		return d
	}
	if x := get("XDG_STATE_HOME", ""); x != "" {
		return filepath.Join(x, "dsh-acp")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "dsh-acp-state")
	}
	return filepath.Join(home, ".local", "state", "dsh-acp")
}

// parseSize reads a size in bytes: digits, optionally followed by K, M
// or G (powers of 1024; "KiB", "KB", "k" and the like are accepted too).
func parseSize(v string) (int64, error) {
	v = strings.TrimSpace(v)
	i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	num, unit := v, ""
	if i >= 0 {
		num, unit = v[:i], strings.ToLower(strings.TrimSpace(v[i:]))
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, err
	}
	shift := 0
	switch strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i") {
	case "":
		if unit != "" && unit != "b" {
			return 0, fmt.Errorf("unknown unit %q", unit)
		}
	case "k":
		shift = 10
	case "m":
		shift = 20
	case "g":
		shift = 30
	default:
		return 0, fmt.Errorf("unknown unit %q", unit)
	}
	if n > (1<<62)>>shift {
		return 0, errors.New("too large")
	}
	return n << shift, nil
}

// parseTimeout reads a duration ("120s", "5m", "1m30s") or a number of
// seconds; "0" means none.
func parseTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err == nil && d < 0 {
		err = errors.New("negative")
	}
	return d, err
}

// errReported is a flag error the flag package has already printed.
var errReported = errors.New("invalid flags")

// splitNames splits a comma-separated list, dropping empty entries and
// the spaces around names.
func splitNames(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// homePaths expands a leading "~/" of each path to the home folder.
func homePaths(paths []string) []string {
	home, err := os.UserHomeDir()
	for i, p := range paths {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && err == nil {
			paths[i] = filepath.Join(home, rest)
		}
	}
	return paths
}
