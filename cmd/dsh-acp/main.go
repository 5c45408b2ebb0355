// Command dsh-acp serves the Agent Client Protocol on stdin/stdout: an
// editor such as Zed starts it as a child process and talks JSON-RPC 2.0
// to it, one message per line. `dsh-acp --help` lists the flags and
// their variables; the subcommands are demo, diff, login, logout and
// version. The sandbox helper's hidden
// subcommand (__sandbox-exec) never reaches main: package
// sandbox/internal/helper serves it from its init function.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/dsh-acp/dsh-acp/credentials"
	"github.com/dsh-acp/dsh-acp/internal/wiretap"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/sandbox"
	"github.com/dsh-acp/dsh-acp/server"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "diff":
			return runDiff(args[1:], stdout, stderr)
		case "demo":
			return runDemo(args[1:], stdout, stderr)
		}
	}
	cfg, err := parseConfig(commandArgs(args), os.LookupEnv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout, os.LookupEnv)
		return 0
	}
	if err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(stderr, "dsh-acp:", err)
		}
		return 2
	}
	switch cfg.Command {
	case "login":
		return runLogin(cfg, stdin, stdout, stderr)
	case "logout":
		return runLogout(cfg, stdout, stderr)
	}
	if cfg.ShowVersion {
		printVersion(cfg, stdout)
		return 0
	}
	// The log and the trace are redacted alike. The keys the redactor
	// knows: the variable's, the one `login` stored for the endpoint, and
	// any the model client sends later (a login while the agent runs).
	redactor := wiretap.NewRedactor(cfg.APIKey)
	if k, err := keySource(cfg).Store.Load(cfg.BaseURL); err == nil {
		redactor.Add(k)
	}
	cfg.keySeen = redactor.Add
	log := slog.New(slog.NewTextHandler(redactor.Writer(stderr), &slog.HandlerOptions{Level: cfg.LogLevel}))
	trace, err := openTrace(&cfg, log)
	if err != nil {
		fmt.Fprintln(stderr, "dsh-acp: --trace (or DSH_TRACE):", err)
		return 2
	}
	if trace != nil {
		defer trace.Close()
	}
	// A recording holds every model request (whole conversations):
	// commands may not read it either.
	if cfg.Record != "" {
		if abs, err := filepath.Abs(cfg.Record); err == nil {
			cfg.Sandbox.Hidden = append(cfg.Sandbox.Hidden, abs)
		}
	}
	// Every ACP line passes the tap when it has something to do: the
	// debug log of each message, the redacted trace.
	opts := wiretap.Options{Log: log, Redactor: redactor, PID: os.Getpid()}
	if trace != nil {
		opts.Trace = trace
	}
	tap := wiretap.New(opts)
	if tap.Active() {
		stdin, stdout = tap.Reader(stdin), tap.Writer(stdout)
	}
	return serve(cfg, stdin, stdout, stderr, log)
}

// commandArgs is args with a subcommand's words in the places
// parseConfig reads them: "help" and "version" become the flags of the
// same name (after the flags given with them, which apply); "login" and
// "logout" go after the other flags, followed by login's own --no-check.
func commandArgs(args []string) []string {
	if len(args) == 0 {
		return args
	}
	switch args[0] {
	case "help", "version":
		return append(append([]string{}, args[1:]...), "--"+args[0])
	case "login", "logout":
		var rest, own []string
		for _, a := range args[1:] {
			if args[0] == "login" && isNoCheck(a) {
				own = append(own, a)
			} else {
				rest = append(rest, a)
			}
		}
		return append(append(rest, args[0]), own...)
	}
	return args
}

// printVersion writes `dsh-acp version`'s lines: the version, the
// sandbox's state, how processes are confined, and what caches stay
// writable.
func printVersion(cfg config, stdout io.Writer) {
	h := sandbox.Probe()
	fmt.Fprintln(stdout, "dsh-acp", version)
	fmt.Fprintln(stdout, "sandbox:", sandbox.Describe(cfg.Sandbox, h))
	fmt.Fprintln(stdout, "processes:", sandbox.DescribeProcesses(cfg.Sandbox, h))
	if caches := sandbox.DescribeCaches(cfg.Sandbox); caches != "" {
		fmt.Fprintln(stdout, "caches:", caches)
	}
}

// openTrace opens cfg's --trace file for appending (mode 0600), nil
// without one, and hides it from commands: it holds every session's
// messages, like the state folder's logs.
func openTrace(cfg *config, log *slog.Logger) (*os.File, error) {
	if cfg.Trace == "" {
		return nil, nil
	}
	f, err := os.OpenFile(cfg.Trace, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	log.Info("tracing ACP messages", "file", cfg.Trace)
	if abs, err := filepath.Abs(cfg.Trace); err == nil {
		cfg.Sandbox.Hidden = append(cfg.Sandbox.Hidden, abs)
	}
	return f, nil
}

// serve runs the agent on the editor's pipes until stdin ends or a
// SIGTERM/SIGINT arrives, then exits 0. A server that cannot be built (a
// tool that fails to register) exits 1 with the message on stderr.
func serve(cfg config, stdin io.Reader, stdout, stderr io.Writer, log *slog.Logger) int {
	srv, err := newServer(cfg, log)
	if err != nil {
		fmt.Fprintln(stderr, "dsh-acp:", err)
		return 1
	}
	defer srv.Close()
	// A write to a closed stdout must fail, not kill the process; a
	// handler (not SIG_IGN) keeps children's default SIGPIPE behaviour.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	conn := srv.Serve(stdin, stdout)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	select {
	case <-conn.Done():
	case s := <-sigs:
		log.Info("shutting down", "signal", s.String())
		conn.Shutdown()
	}
	return 0
}

// newServer builds the server the flags describe; Close it when done.
func newServer(cfg config, log *slog.Logger) (*server.Server, error) {
	client := modelClient(cfg, log)
	o := server.Options{
		Client:           client,
		Model:            cfg.Model,
		MaxSteps:         cfg.MaxSteps,
		Mode:             cfg.Mode,
		StateDir:         cfg.StateDir,
		Sandbox:          cfg.Sandbox,
		Log:              log,
		Version:          version,
		MaxMessageBytes:  cfg.MaxMessageBytes,
		SpillMax:         cfg.SpillMax,
		Catalog:          cfg.Catalog,
		ContextWindow:    cfg.ContextWindow,
		Provider:         cfg.Provider,
		Thinking:         cfg.Thinking != "" || cfg.Provider.DeepSeek(),
		ThinkingDefault:  cfg.Thinking,
		MCPWait:          cfg.MCPWait,
		MCPTrusted:       cfg.MCPTrusted,
		SandboxAllowRead: cfg.SandboxAllowRead,
		Auth:             authFor(cfg),
		ImageModels:      cfg.ImageModels,
		Titles:           cfg.Titles,
		CommandsDir:      cfg.CommandsDir,
		CompactAt:        cfg.CompactAt,
		// A recording replays its children in the order they ran.
		SubagentsSequential: cfg.Replay != "",
		SubagentDepth:       cfg.SubagentDepth,
		PromptQueue:         cfg.PromptQueue,
		Web:                 webConfig(cfg, log),
	}
	// Over a live endpoint the editor may route the model requests
	// elsewhere (providers/set).
	if sw, ok := client.(*llm.Switch); ok {
		route := func(baseURL, key string) {
			if key != "" && cfg.keySeen != nil {
				cfg.keySeen(key) // the log and the trace redact it
			}
			sw.Route(baseURL, key)
		}
		o.Providers = &server.Providers{MainURL: credentials.Endpoint(cfg.BaseURL), Route: route}
		// Only DeepSeek's API has the balance endpoint.
		if cfg.Provider.DeepSeek() {
			o.Balance, o.LowBalance = sw.Balance, cfg.LowBalance
		}
	}
	// A replay answers no /models: the selector lists the configured
	// and known models.
	if l, ok := client.(llm.ModelLister); ok {
		o.Models = l
	}
	if cfg.MCPWait == 0 {
		o.MCPWait = -1 // server.Options: no wait
	}
	if cfg.LocationLineBase >= 0 {
		base := cfg.LocationLineBase
		o.LocationLineBase = &base
	}
	return server.New(o)
}

// modelClient is the replay client with --replay, else the HTTP client
// behind an llm.Switch (providers/set routes it).
func modelClient(cfg config, log *slog.Logger) llm.Client {
	if cfg.Replay != "" {
		log.Info("replaying model responses", "dir", cfg.Replay)
		return llm.NewReplay(cfg.Replay)
	}
	idle := cfg.ModelIdleTimeout
	if idle == 0 {
		idle = -1 // llm.HTTP: none
	}
	keyFunc := keySource(cfg).APIKey
	if seen := cfg.keySeen; seen != nil {
		keyFunc = func() (string, error) {
			k, err := keySource(cfg).APIKey()
			if err == nil {
				seen(k)
			}
			return k, err
		}
	}
	return llm.NewSwitch(llm.HTTP{BaseURL: cfg.BaseURL, KeyFunc: keyFunc, RecordDir: cfg.Record,
		UserAgent: "dsh-acp/" + version, Logger: log, IdleTimeout: idle})
}
