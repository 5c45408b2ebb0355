package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/acp"
	"github.com/dsh-acp/dsh-acp/internal/e2etest"
	"github.com/dsh-acp/dsh-acp/llm"
	"github.com/dsh-acp/dsh-acp/slash"
)

// writeFile writes path (and its folders) or fails t.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commandsIn returns the commands of the last available_commands_update
// of session sid among ms, as "name|description|hint".
func commandsIn(t *testing.T, ms []wireMsg, sid string) []string {
	t.Helper()
	var out []string
	for _, u := range updatesOf(ms, sid) {
		if string(u["sessionUpdate"]) != `"available_commands_update"` {
			continue
		}
		var cs []acp.AvailableCommand
		if err := json.Unmarshal(u["availableCommands"], &cs); err != nil {
			t.Fatal(err)
		}
		out = out[:0]
		for _, c := range cs {
			hint := ""
			if c.Input != nil {
				hint = c.Input.Hint
			}
			out = append(out, c.Name+"|"+c.Description+"|"+hint)
		}
	}
	return out
}

// TestSlashCommands: the commands (built-ins, then the user's: the
// project's file wins over the user's of the same name, a file named
// like a built-in is left out and logged) follow the answer of new,
// load, resume and fork; a user command's body is the prompt with
// $ARGUMENTS replaced, replayed as the user typed it; /init asks for
// AGENTS.md; an unknown /x reaches the model as typed; a new command
// file is offered at the next prompt.
func TestSlashCommands(t *testing.T) {
	state, cwd, user := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(cwd, ".dsh", "commands", "fix.md"), "---\ndescription: \"Fix a bug, test first\"\n---\nWrite a failing test for $ARGUMENTS, then fix $ARGUMENTS.\n")
	writeFile(t, filepath.Join(user, "fix.md"), "The user's fix, which the project's replaces.\n")
	writeFile(t, filepath.Join(user, "hello.md"), "# Say hello\n\nGreet the user warmly.\n")
	writeFile(t, filepath.Join(user, "review.md"), "Not the built-in.\n")
	rec := &capturing{inner: llm.NewReplay(e2etest.Replay(t,
		e2etest.LiveText([]string{"Ok."}, []string{"Fixed."}, small),
		e2etest.LiveText([]string{"Ok."}, []string{"Hello!"}, small),
		e2etest.LiveText([]string{"Ok."}, []string{"No such command here."}, small),
		e2etest.LiveText([]string{"Ok."}, []string{"Wrote AGENTS.md."}, small),
		e2etest.LiveText([]string{"Ok."}, []string{"Later."}, small),
	))}
	var logs bytes.Buffer
	h := newHarness(t, harnessOpts{model: rec, stateDir: state, cwd: cwd, commandsDir: user, logs: &logs})
	sid := h.start(harnessOpts{})
	want := []string{
		"compact|Summarize the conversation so far; later requests carry the summary instead of the old messages|what the summary should focus on (optional)",
		"init|Write or update AGENTS.md, the instructions for agents working on this project|what else AGENTS.md should cover (optional)",
		"review|Review the uncommitted changes (git status and git diff), read-only|what to look at (optional)",
		"undo|Put the files back as they were before the last turn that changed them (again: one more turn back)|",
		"fix|Fix a bug, test first|arguments",
		"hello|Say hello|",
	}
	if got := commandsIn(t, agentMsgs(t, h, 0), sid); !reflect.DeepEqual(got, want) {
		t.Errorf("commands after session/new:\n%q\nwant\n%q", got, want)
	}
	if !strings.Contains(logs.String(), "/review is a built-in command") {
		t.Errorf("the clash with /review was not logged:\n%s", logs.String())
	}

	h.promptAll(sid, "/fix the date parser", "/hello", "/nope keep this", "/init also the release steps")
	reqs := rec.requests()
	prompts := make([]string, len(reqs))
	for i, r := range reqs {
		prompts[i] = r.Messages[len(r.Messages)-1].Content
	}
	wantPrompts := []string{
		"Write a failing test for the date parser, then fix the date parser.\n",
		"# Say hello\n\nGreet the user warmly.\n",
		"/nope keep this",
		slash.InitPrompt("also the release steps"),
	}
	if !reflect.DeepEqual(prompts, wantPrompts) {
		t.Errorf("prompts to the model:\n%q\nwant\n%q", prompts, wantPrompts)
	}

	// A new file is offered at the next prompt, before its turn.
	from := len(agentMsgs(t, h, 0))
	writeFile(t, filepath.Join(cwd, ".dsh", "commands", "later.md"), "Do it later: $ARGUMENTS\n")
	if _, err := h.prompt(sid, "/later the docs"); err != nil {
		t.Fatal(err)
	}
	ms := agentMsgs(t, h, from)
	if got := commandsIn(t, ms, sid); len(got) != 7 || got[6] != "later|Do it later: $ARGUMENTS|arguments" {
		t.Errorf("commands after the folder changed: %q", got)
	}
	if u := updatesOf(ms, sid); len(u) == 0 || string(u[0]["sessionUpdate"]) != `"available_commands_update"` {
		t.Errorf("the refreshed commands are not the prompt's first update")
	}
	if got := rec.requests()[4].Messages; got[len(got)-1].Content != "Do it later: the docs\n" {
		t.Errorf("the new command's prompt %q", got[len(got)-1].Content)
	}
	// Unchanged folders: no update.
	from = len(agentMsgs(t, h, 0))
	if code, _ := rpcError(t, h, "session/prompt", map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{acp.TextBlock("/fix it")}}); code == 0 {
		t.Fatal("a sixth prompt was answered; the recording has five")
	}
	if got := commandsIn(t, agentMsgs(t, h, from), sid); got != nil {
		t.Errorf("commands sent again with the folders unchanged: %q", got)
	}

	// Replayed as typed.
	replay, err := h.load(sid, cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	var typed []string
	for _, u := range replay {
		if string(u["sessionUpdate"]) == `"user_message_chunk"` {
			var c struct{ Content acp.ContentBlock }
			_ = json.Unmarshal(updateJSON(t, u), &c)
			typed = append(typed, c.Content.Text)
		}
	}
	if !reflect.DeepEqual(typed, []string{"/fix the date parser", "/hello", "/nope keep this", "/init also the release steps", "/later the docs", "/fix it"}) {
		t.Errorf("replayed prompts %q", typed)
	}

	// Resume and fork are followed by the commands too (load was, in
	// h.load; new, in h.start).
	from = len(agentMsgs(t, h, 0))
	h.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": cwd}, nil)
	h.answerThenCommands(from, sid, "resume")
	from = len(agentMsgs(t, h, 0))
	var fr acp.ForkSessionResponse
	h.mustCall("session/fork", map[string]any{"sessionId": sid, "cwd": cwd}, &fr)
	h.answerThenCommands(from, fr.SessionID, "fork")
	if got := commandsIn(t, agentMsgs(t, h, from), fr.SessionID); len(got) != 7 {
		t.Errorf("the fork's commands %q", got)
	}
}

// git runs git in dir or fails t.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestReviewCommand: /review in a git repository (on a recording): the
// agent itself ran git status, git diff and git diff --cached, whose
// output is in the prompt; the turn runs under plan mode's rules, so the
// model's write and command are refused and nothing changes, though the
// session is in bypassPermissions; the next turn is back to the
// session's own rules.
func TestReviewCommand(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("LC_ALL", "C")
	writeFile(t, filepath.Join(cwd, "parse.go"), "package p\n\nfunc Parse() int { return 1 }\n")
	git(t, cwd, "init", "-q")
	git(t, cwd, "add", "parse.go")
	git(t, cwd, "commit", "-q", "-m", "first")
	writeFile(t, filepath.Join(cwd, "parse.go"), "package p\n\nfunc Parse() int { return 2 }\n")
	writeFile(t, filepath.Join(cwd, "staged.go"), "package p\n\nvar Staged = true\n")
	git(t, cwd, "add", "staged.go")
	target := filepath.Join(cwd, "parse.go")
	rec := &capturing{inner: llm.NewReplay(e2etest.Replay(t,
		e2etest.LiveToolCall([]string{"Fix it myself."}, 1, "write", fmt.Sprintf(`{"file_path":%q,"content":"changed"}`, target), small),
		e2etest.LiveToolCall([]string{"Run the tests."}, 2, "bash", `{"command":"touch ran.txt","description":"Touch"}`, small),
		e2etest.LiveText([]string{"Reviewing."}, []string{"parse.go: Parse now returns 2; check the callers."}, small),
		e2etest.LiveToolCall([]string{"Now write."}, 3, "write", fmt.Sprintf(`{"file_path":%q,"content":"after review"}`, filepath.Join(cwd, "after.txt")), small),
		e2etest.LiveText([]string{"Done."}, []string{"Wrote it."}, small),
	))}
	h := newHarness(t, harnessOpts{model: rec, stateDir: state, cwd: cwd})
	sid := h.start(harnessOpts{})
	if stop, err := h.prompt(sid, "/review the parser"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("/review = %q, %v", stop, err)
	}
	reqs := rec.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	p := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	for _, want := range []string{
		"$ git status\n", "modified:   parse.go", "new file:   staged.go",
		"$ git diff --no-ext-diff --no-textconv\n```diff\n", "-func Parse() int { return 1 }\n+func Parse() int { return 2 }",
		"$ git diff --cached --no-ext-diff --no-textconv\n```diff\n", "+var Staged = true",
		"plan mode's rules apply", "The user asks you to look at: the parser",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the review prompt lacks %q:\n%s", want, p)
		}
	}
	for i, r := range reqs[1:3] {
		m := r.Messages[len(r.Messages)-1]
		if m.Role != "tool" || !strings.Contains(m.Content, "plan mode") {
			t.Errorf("call %d's result %q, want the plan mode refusal", i+1, m.Content)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "package p\n\nfunc Parse() int { return 2 }\n" {
		t.Errorf("the review changed parse.go: %q", b)
	}
	if _, err := os.Stat(filepath.Join(cwd, "ran.txt")); err == nil {
		t.Error("the review ran a command")
	}
	if stop, err := h.prompt(sid, "now write after.txt"); err != nil || stop != acp.StopEndTurn {
		t.Fatalf("next prompt = %q, %v", stop, err)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "after.txt")); err != nil || string(b) != "after review" {
		t.Errorf("after the review, the session's own rules: after.txt %q, %v", b, err)
	}
}
