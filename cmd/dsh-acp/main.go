// Command dsh-acp serves the Agent Client Protocol on stdin/stdout: an
// editor such as Zed starts it as a child process and talks JSON-RPC 2.0
// to it, one message per line. See INTERFACE.md for flags, variables and
// subcommands (demo, diff).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/dsh-acp/dsh-acp/agent"
	"github.com/dsh-acp/dsh-acp/bridge"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/tools"
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
	cfg, err := parseConfig(args, os.LookupEnv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(stderr, "dsh-acp:", err)
		}
		return 2
	}
	if cfg.ShowVersion {
		fmt.Fprintln(stdout, "dsh-acp", version)
		return 0
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	return serve(cfg, stdin, stdout, log)
}

// serve runs the agent on the editor's pipes until stdin ends or a
// SIGTERM/SIGINT arrives, then exits 0.
func serve(cfg config, stdin io.Reader, stdout io.Writer, log *slog.Logger) int {
	// A write to a closed stdout must fail, not kill the process; a
	// handler (not SIG_IGN) keeps children's default SIGPIPE behaviour.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	b, cleanup := newBridge(cfg, log)
	defer cleanup()
	conn := b.Serve(stdin, stdout)
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

// newBridge wires the model client, the tools, the agent loop and the
// bridge as the binary runs them; cleanup stops what they started.
func newBridge(cfg config, log *slog.Logger) (*bridge.Bridge, func()) {
	return newBridgeWith(cfg, log, modelClient(cfg, log))
}

// newBridgeWith is newBridge with a given model client (tests inject
// fakes with fast retries).
func newBridgeWith(cfg config, log *slog.Logger, client llm.Client) (*bridge.Bridge, func()) {
	reg := tools.NewRegistry()
	stopTools := registerTools(reg, log)
	a := agent.New(agent.Config{
		Client:   client,
		Tools:    reg,
		Model:    cfg.Model,
		MaxSteps: cfg.MaxSteps,
		Log:      log,
	})
	b := bridge.New(bridge.Config{Agent: a, Tools: reg, Version: version, LocationLineBase: cfg.LocationLineBase, Mode: cfg.Mode, StateDir: cfg.StateDir, Log: log})
	reg.Use(b.Permission)
	return b, stopTools
}

// modelClient is the replay client with --replay, else the HTTP client.
func modelClient(cfg config, log *slog.Logger) llm.Client {
	if cfg.Replay != "" {
		log.Info("replaying model responses", "dir", cfg.Replay)
		return llm.NewReplay(cfg.Replay)
	}
	return llm.HTTP{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, RecordDir: cfg.Record,
		UserAgent: "dsh-acp/" + version, Logger: log}
}
