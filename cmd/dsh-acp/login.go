package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/credentials"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/server"
)

// defaultBaseURL is --base-url's default: DeepSeek's API.
const defaultBaseURL = "https://api.deepseek.com"

// loginCheckTimeout bounds the `GET /models` that checks a key.
const loginCheckTimeout = 30 * time.Second

// keySource is where the agent's key comes from: DSH_API_KEY, then
// DEEPSEEK_API_KEY, then the credentials file's key for the endpoint,
// looked up at every model request.
func keySource(cfg config) credentials.Source {
	return credentials.Source{Env: cfg.Env, Store: credentials.Store{Path: cfg.Credentials}, BaseURL: cfg.BaseURL}
}

// authFor is the bridge's view of the key: the login command the editor
// runs (this executable, with --base-url when the endpoint is not the
// default, so the key is checked and stored for the endpoint the agent
// uses), the check before each prompt (none with --replay, which needs
// no key), the keys auth/status lists, and logout.
func authFor(cfg config) server.Auth {
	src := keySource(cfg)
	a := server.Auth{LoginArgs: []string{"login"}}
	if credentials.Endpoint(cfg.BaseURL) != defaultBaseURL {
		a.LoginArgs = []string{"--base-url", cfg.BaseURL, "login"}
	}
	if cfg.Replay == "" {
		a.Check = src.Check
		a.Accounts = func() []acp.AuthAccount {
			var out []acp.AuthAccount
			for _, k := range src.Accounts() {
				active := k.Active
				out = append(out, acp.AuthAccount{Label: k.Label, Active: &active})
			}
			return out
		}
	}
	a.Logout = func() error {
		if cfg.Credentials == "" {
			return nil
		}
		_, err := src.Store.Remove(cfg.BaseURL)
		return err
	}
	return a
}

// runLogin is `dsh-acp login`: it asks for the key on the terminal
// without echo, checks it with `GET {base}/models` (not with --no-check)
// and stores it for the endpoint. When the check cannot run (the
// endpoint unreachable, a 404, any answer but 401/403) it says so and
// asks whether to store the key anyway. Exit 0 when stored; 1 when the
// endpoint rejects the key (401/403) or the user declines (nothing is
// stored); 2 without a terminal, without a place for the file, or for an
// empty or malformed key.
func runLogin(cfg config, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(stderr, "dsh-acp login: "+format+"\n", args...)
		return code
	}
	if cfg.CredentialsErr != nil {
		return fail(2, "%v", cfg.CredentialsErr)
	}
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return fail(2, "needs an interactive terminal to read the API key without echo, and standard input is not one.\n"+
			"Run `dsh-acp login` in a terminal, or set DSH_API_KEY (or DEEPSEEK_API_KEY) in the agent's environment instead.")
	}
	fd := int(f.Fd())
	base := credentials.Endpoint(cfg.BaseURL)
	fmt.Fprintf(stderr, "Log in to %s\n", base)
	if base == defaultBaseURL {
		fmt.Fprintln(stderr, "Create a key at https://platform.deepseek.com/api_keys if you have none.")
	}
	fmt.Fprint(stderr, "API key (input hidden): ")
	key, err := readSecret(fd)
	fmt.Fprintln(stderr)
	if err != nil {
		return fail(2, "reading the key: %v", err)
	}
	key = strings.TrimSpace(key)
	if err := credentials.ValidKey(key); err != nil {
		return fail(2, "%v; nothing was stored", err)
	}
	checked := fmt.Sprintf("Not checked (--no-check) at %s.", base)
	if !cfg.NoCheck {
		fmt.Fprintf(stderr, "Checking the key with GET %s/models ...\n", base)
		ctx, cancel := context.WithTimeout(context.Background(), loginCheckTimeout)
		defer cancel()
		models, err := llm.HTTP{BaseURL: cfg.BaseURL, APIKey: key, UserAgent: "dsh-acp/" + version}.ListModels(ctx)
		var le *llm.Error
		switch {
		case err == nil:
			checked = fmt.Sprintf("The key works (%s at %s).", countModels(len(models)), base)
		case errors.As(err, &le) && le.Code == llm.CodeAuth:
			return fail(1, "the endpoint rejected the key (HTTP %d: %s); nothing was stored", le.Status, le.Message)
		default:
			// Some proxies let only chat requests through: the check could
			// not run, which says nothing about the key.
			fmt.Fprintf(stderr, "Could not check the key: %v\n", err)
			if !askYes(f, stderr, "Store the key anyway? [y/N] ") {
				return fail(1, "nothing was stored")
			}
			checked = fmt.Sprintf("Not checked (GET %s/models could not be reached).", base)
		}
	}
	store := credentials.Store{Path: cfg.Credentials}
	if err := store.Save(cfg.BaseURL, key); err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintf(stdout, "%s Stored in %s (readable by you only).\n", checked, store.Path)
	if name := keySource(cfg).EnvOrigin(); name != "" {
		fmt.Fprintf(stdout, "Note: %s is set in this environment; it is used instead of the stored key.\n", name)
	}
	return 0
}

// askYes asks question on w and reads one line from the terminal f
// (echoed): true for "y" or "yes" in any case, false for anything else,
// an empty line or an error.
func askYes(f *os.File, w io.Writer, question string) bool {
	fmt.Fprint(w, question)
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(w)
		return false
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}

// readSecret reads one line from the terminal fd without echo. An
// interrupt (Ctrl-C) while it waits restores the terminal before the
// process ends, so the shell is not left without echo.
func readSecret(fd int) (string, error) {
	old, err := term.GetState(fd)
	if err != nil {
		return "", err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	defer func() {
		signal.Stop(sigs)
		close(done)
	}()
	go func() {
		select {
		case <-sigs:
			_ = term.Restore(fd, old)
			fmt.Fprintln(os.Stderr, "\ndsh-acp login: interrupted; nothing was stored")
			os.Exit(130)
		case <-done:
		}
	}()
	b, err := term.ReadPassword(fd)
	return string(b), err
}

// runLogout is `dsh-acp logout`: it removes the key stored for the
// endpoint (and the file when no key is left). Exit 0, also when nothing
// was stored; 1 when the file cannot be changed; 2 when it has no place.
func runLogout(cfg config, stdout, stderr io.Writer) int {
	if cfg.CredentialsErr != nil {
		fmt.Fprintf(stderr, "dsh-acp logout: %v\n", cfg.CredentialsErr)
		return 2
	}
	base := credentials.Endpoint(cfg.BaseURL)
	removed, err := credentials.Store{Path: cfg.Credentials}.Remove(cfg.BaseURL)
	if err != nil {
		fmt.Fprintf(stderr, "dsh-acp logout: %v\n", err)
		return 1
	}
	if removed {
		fmt.Fprintf(stdout, "Removed the API key stored for %s from %s.\n", base, cfg.Credentials)
	} else {
		fmt.Fprintf(stdout, "No API key was stored for %s in %s.\n", base, cfg.Credentials)
	}
	if name := keySource(cfg).EnvOrigin(); name != "" {
		fmt.Fprintf(stdout, "Note: %s is set in this environment; the agent still uses it.\n", name)
	}
	return 0
}

// countModels is "1 model" or "N models".
func countModels(n int) string {
	if n == 1 {
		return "1 model"
	}
	return fmt.Sprintf("%d models", n)
}
