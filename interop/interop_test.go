// Package interop drives the real dsh-acp binary with the official ACP
// TypeScript SDK client (run.mjs, @agentclientprotocol/sdk) over stdio, on
// the replay scenarios of testdata/replay (and of ../shared/fixtures/replay
// when it is beside the repository).
package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/internal/acptest"
)

// runTimeout bounds one run.mjs invocation; a replayed scenario takes well
// under a second.
const runTimeout = 90 * time.Second

// runResult mirrors the JSON object run.mjs prints on stdout.
type runResult struct {
	Scenario        string `json:"scenario"`
	ProtocolVersion int    `json:"protocolVersion"`
	AgentInfo       *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"agentInfo"`
	SessionIDs           []string         `json:"sessionIds"`
	StopReasons          []string         `json:"stopReasons"`
	Thoughts             []string         `json:"thoughts"`
	Messages             []string         `json:"messages"`
	ToolCalls            []map[string]any `json:"toolCalls"`
	PermissionRequests   []map[string]any `json:"permissionRequests"`
	ElicitationRequests  []map[string]any `json:"elicitationRequests"`
	UpdateKinds          map[string]int   `json:"updateKinds"`
	UpdatesCount         int              `json:"updatesCount"`
	UpdatesOutsidePrompt int              `json:"updatesOutsidePrompt"`
	NewSessionOptions    []configOption   `json:"newSessionConfigOptions"`
	ConfigResponses      []struct {
		ConfigID      string         `json:"configId"`
		Value         string         `json:"value"`
		ConfigOptions []configOption `json:"configOptions"`
	} `json:"configResponses"`
	UsageUpdates []struct {
		Prompt int    `json:"prompt"`
		Used   uint64 `json:"used"`
		Size   uint64 `json:"size"`
		Cost   *struct {
			Amount   float64 `json:"amount"`
			Currency string  `json:"currency"`
		} `json:"cost"`
	} `json:"usageUpdates"`
	Errors     []string `json:"errors"`
	Warnings   []string `json:"warnings"`
	ExitCode   *int     `json:"exitCode"`
	ExitSignal *string  `json:"exitSignal"`
	StderrTail string   `json:"stderrTail"`
}

// runNode runs `node run.mjs agent scenario workdir` (with extraEnv,
// NAME=value entries, added to its environment) and returns its parsed
// report and node's own exit code. It fails the test when node cannot run or
// prints anything but one JSON object.
func runNode(t *testing.T, env nodeEnv, agent, scenario string, extraEnv ...string) (runResult, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.node, filepath.Join(env.dir, "run.mjs"), agent, scenario, t.TempDir())
	cmd.Dir = env.dir
	cmd.Env = append(append(cmd.Environ(), "INTEROP_TIMEOUT_MS=60000"), extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("run.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var r runResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("run.mjs printed no JSON report (%v); exit %d\nstdout:\n%s\nstderr:\n%s", err, code, stdout.String(), stderr.String())
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("run.mjs stderr:\n%s", stderr.String())
	}
	return r, code
}

// buildAgent builds ./cmd/dsh-acp from the repo root into a temp dir,
// statically (CGO_ENABLED=0) as the README builds it.
func buildAgent(t *testing.T, root string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "dsh-acp")
	cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/dsh-acp")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/dsh-acp: %v\n%s", err, out)
	}
	return bin
}

// scenarioCheck asserts what one scenario's NOTES.md says about a run; dir
// is the scenario folder.
type scenarioCheck func(t *testing.T, dir string, r runResult)

// scenarios maps scenario names (folders of testdata/replay and of
// ../shared/fixtures/replay) to their checks. The checks take every
// expected value (texts, tool call ids, arguments, file contents) from
// the folder's recordings, steps.json and workspace/, so they hold for
// the repository's recordings and the shared ones alike.
var scenarios = []struct {
	name  string
	check scenarioCheck
}{
	{"handshake", handshake},
	{"text-turn", textOnlyTurns(1)},
	{"multi-turn", textOnlyTurns(2)},
	{"tool-call-turn", toolCallTurn},
	{"fs-read", fsRead},
	{"fs-write", fsWrite},
}

// TestSDKClientScenarios runs every scenario of the repository's
// recordings (testdata/replay) and, as an extra check when they are beside
// the repository (required under CI=true), of the recorded real sessions
// in ../shared/fixtures/replay.
func TestSDKClientScenarios(t *testing.T) {
	env := needNode(t)
	agent := buildAgent(t, env.root)
	for _, src := range acptest.ReplaySources(t) {
		t.Run(src.Name, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					runScenario(t, env, agent, filepath.Join(src.Dir, sc.name), sc.check)
				})
			}
		})
	}
}

// checkCleanRun checks that run.mjs (exit code code) and the agent
// both exited 0 and that the run reported no error and no warning.
func checkCleanRun(t *testing.T, r runResult, code int) {
	t.Helper()
	for _, e := range r.Errors {
		t.Errorf("run error: %s", e)
	}
	for _, w := range r.Warnings {
		t.Errorf("run warning: %s", w)
	}
	if code != 0 {
		t.Errorf("run.mjs exit code = %d, want 0", code)
	}
	if r.ExitCode == nil || *r.ExitCode != 0 {
		t.Errorf("agent exit after stdin EOF: code %v signal %v, want code 0; stderr tail:\n%s", deref(r.ExitCode), deref(r.ExitSignal), r.StderrTail)
	}
}

// runScenario runs one scenario folder and applies the checks every run
// shares, then check.
func runScenario(t *testing.T, env nodeEnv, agent, dir string, check scenarioCheck) {
	t.Helper()
	r, code := runNode(t, env, agent, dir)
	checkCleanRun(t, r, code)
	if r.ProtocolVersion != 1 {
		t.Errorf("initialize protocolVersion = %d, want 1", r.ProtocolVersion)
	}
	if r.AgentInfo == nil || r.AgentInfo.Name != "dsh-acp" || r.AgentInfo.Version == "" {
		t.Errorf("agentInfo = %+v, want name dsh-acp and a version", r.AgentInfo)
	}
	if len(r.SessionIDs) != 1 || r.SessionIDs[0] == "" {
		t.Errorf("session ids = %q, want one non-empty id", r.SessionIDs)
	}
	check(t, dir, r)
}

// handshake checks a scenario without prompts: no model request was
// possible (the folder has no NNN.sse), no tool call, and no update but
// the new session's slash commands (one available_commands_update,
// which the agent sends after the session/new answer).
func handshake(t *testing.T, dir string, r runResult) {
	t.Helper()
	if sse, _ := filepath.Glob(filepath.Join(dir, "*.sse")); len(sse) != 0 {
		t.Fatalf("the handshake scenario has recordings %q; it must not call the model", sse)
	}
	if len(r.StopReasons) != 0 || len(r.Messages) != 0 || len(r.ToolCalls) != 0 || len(r.PermissionRequests) != 0 {
		t.Errorf("stop reasons %q, messages %q, tool calls %v, permission requests %v: want none without a prompt", r.StopReasons, r.Messages, r.ToolCalls, r.PermissionRequests)
	}
	if r.UpdatesCount != 1 || r.UpdateKinds["available_commands_update"] != 1 {
		t.Errorf("%d session updates without a prompt (%v), want only the available_commands_update", r.UpdatesCount, r.UpdateKinds)
	}
}

// textOnlyTurns checks a scenario of prompts prompts that each make one
// model request answered by the folder's NNN.sse (001 for the first
// prompt, ...) without tools: every prompt ends end_turn, its message text
// is what the recording streams (non-empty), and its thought text is the
// recording's reasoning (non-empty).
func textOnlyTurns(prompts int) scenarioCheck {
	return func(t *testing.T, dir string, r runResult) {
		t.Helper()
		wantStops := make([]string, prompts)
		var want, wantThoughts []string
		for i := range prompts {
			wantStops[i] = "end_turn"
			rec := mustRecordedTurn(t, dir, i+1)
			if rec.content == "" || rec.reasoning == "" {
				t.Fatalf("recording %s: text %q, reasoning %q; want both", sseName(i+1), rec.content, rec.reasoning)
			}
			want = append(want, rec.content)
			wantThoughts = append(wantThoughts, rec.reasoning)
		}
		if _, err := os.Stat(filepath.Join(dir, sseName(prompts+1))); err == nil {
			t.Fatalf("the scenario has more than %d recordings", prompts)
		}
		if !reflect.DeepEqual(r.StopReasons, wantStops) {
			t.Errorf("stop reasons = %q, want %q", r.StopReasons, wantStops)
		}
		if !reflect.DeepEqual(r.Messages, want) {
			t.Errorf("message text per prompt = %q, want the recorded %q", r.Messages, want)
		}
		if !reflect.DeepEqual(r.Thoughts, wantThoughts) {
			t.Errorf("thought text per prompt = %q, want the recorded reasoning %q", r.Thoughts, wantThoughts)
		}
		if len(r.ToolCalls) != 0 || len(r.PermissionRequests) != 0 {
			t.Errorf("tool calls %v / permission requests %v in a text-only scenario", r.ToolCalls, r.PermissionRequests)
		}
		if r.UpdateKinds["agent_thought_chunk"] == 0 || r.UpdateKinds["agent_message_chunk"] == 0 {
			t.Errorf("update kinds = %v, want thought and message chunks", r.UpdateKinds)
		}
	}
}

// toolCallTurn checks tool-call-turn: the model runs `echo WORD` with
// bash (a client without live terminals, in the default mode, so the user
// is asked once), then answers. The card is an execute card with the
// recorded call id, titled with the command, completed, the description
// and then the output in a console fence; the thoughts are both recorded
// responses' reasoning.
func toolCallTurn(t *testing.T, dir string, r runResult) {
	t.Helper()
	call, args := recordedCall(t, dir)
	command, _ := args["command"].(string)
	description, _ := args["description"].(string)
	word, ok := strings.CutPrefix(command, "echo ")
	if call.Name != "bash" || !ok || word == "" || strings.ContainsAny(word, " '\"$") || description == "" {
		t.Fatalf("recorded call %+v: want bash running `echo WORD` with a description", call)
	}
	checkTwoStepTurn(t, dir, r)
	if len(r.ToolCalls) != 1 {
		t.Fatalf("%d tool calls, want 1: %v", len(r.ToolCalls), r.ToolCalls)
	}
	c := r.ToolCalls[0]
	for key, want := range map[string]any{"toolCallId": call.ID, "title": command, "kind": "execute", "status": "completed"} {
		if c[key] != want {
			t.Errorf("tool call %s = %v, want %v", key, c[key], want)
		}
	}
	// The output is on the card once (the fence below); rawOutput is the
	// command's exit.
	if want := map[string]any{"exitCode": float64(0), "signal": nil}; !reflect.DeepEqual(c["rawOutput"], want) {
		t.Errorf("tool call rawOutput = %v, want %v", c["rawOutput"], want)
	}
	if !reflect.DeepEqual(c["rawInput"], args) {
		t.Errorf("rawInput = %v, want the recorded arguments %v", c["rawInput"], args)
	}
	wantContent := []any{
		map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": description}},
		map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "```console\n" + word + "\n```"}},
	}
	if !reflect.DeepEqual(c["content"], wantContent) {
		t.Errorf("content = %v, want %v", c["content"], wantContent)
	}
	if _, ok := c["_meta"]; ok {
		t.Errorf("terminal _meta sent to a client without the capability: %v", c["_meta"])
	}
	checkAskedOnce(t, r, call.ID)
}

// checkTwoStepTurn checks a one-prompt scenario of two model requests, a
// tool call and then an answer: the prompt ended end_turn, its message is
// the text of 002.sse (non-empty), its thought text the reasoning of both
// recordings joined.
func checkTwoStepTurn(t *testing.T, dir string, r runResult) {
	t.Helper()
	first, second := mustRecordedTurn(t, dir, 1), mustRecordedTurn(t, dir, 2)
	if second.content == "" || first.reasoning == "" || second.reasoning == "" {
		t.Fatalf("recordings: final text %q, reasoning %q and %q; want all three", second.content, first.reasoning, second.reasoning)
	}
	if _, err := os.Stat(filepath.Join(dir, sseName(3))); err == nil {
		t.Fatal("the scenario has more than 2 recordings")
	}
	if !reflect.DeepEqual(r.StopReasons, []string{"end_turn"}) || !reflect.DeepEqual(r.Messages, []string{second.content}) {
		t.Errorf("stop reasons %q messages %q, want [end_turn] [%s]", r.StopReasons, r.Messages, second.content)
	}
	if want := first.reasoning + second.reasoning; !reflect.DeepEqual(r.Thoughts, []string{want}) {
		t.Errorf("thoughts %q, want the recorded reasoning %q", r.Thoughts, want)
	}
}

// checkAskedOnce checks the run asked permission once, for call id, and
// the runner answered allow-once.
func checkAskedOnce(t *testing.T, r runResult, id string) {
	t.Helper()
	if len(r.PermissionRequests) != 1 || r.PermissionRequests[0]["toolCallId"] != id || r.PermissionRequests[0]["chosen"] != "allow-once" {
		t.Errorf("permission requests %v, want one for %s answered allow-once", r.PermissionRequests, id)
	}
}

// fsToolCall checks that a single-prompt fs scenario ended as its
// recordings say, with exactly one tool call, with the recorded id, the
// kind given and status completed, and returns it.
func fsToolCall(t *testing.T, dir string, r runResult, id, kind string) map[string]any {
	t.Helper()
	checkTwoStepTurn(t, dir, r)
	calls := modelCalls(r.ToolCalls)
	if len(calls) != 1 {
		t.Fatalf("%d tool calls, want 1: %v", len(calls), calls)
	}
	tc := calls[0]
	if tc["toolCallId"] != id || tc["kind"] != kind || tc["status"] != "completed" {
		t.Errorf("tool call id %v kind %v status %v; want %s %s completed", tc["toolCallId"], tc["kind"], tc["status"], id, kind)
	}
	return tc
}

// modelCalls leaves out of calls the cards of a turn's changes (the
// agent's own, after a turn that changed files).
func modelCalls(calls []map[string]any) []map[string]any {
	var out []map[string]any
	for _, c := range calls {
		if id, _ := c["toolCallId"].(string); !strings.HasSuffix(id, "-changes") {
			out = append(out, c)
		}
	}
	return out
}

// fileIn returns the content of the file named base at the absolute path
// p that a card reported (the scenario's cwd is a temp dir of the run,
// still present while the check runs).
func fileIn(t *testing.T, p any, base string) string {
	t.Helper()
	s, _ := p.(string)
	if !filepath.IsAbs(s) || filepath.Base(s) != base {
		t.Fatalf("card path %v: want an absolute path to %s", p, base)
	}
	b, err := os.ReadFile(s)
	if err != nil {
		t.Fatalf("the file the card names: %v", err)
	}
	return string(b)
}

// fsRead checks fs-read: the recorded read of a workspace file gives a
// read card titled with the path, with one absolute location at line 1,
// no permission asked (a read inside the project), its rawOutput the
// model's text (the file's lines numbered from 1 and the end-of-file
// footer), its content the lines in a fence, and the file unchanged on
// disk.
func fsRead(t *testing.T, dir string, r runResult) {
	t.Helper()
	call, args := recordedCall(t, dir)
	name, _ := args["file_path"].(string)
	if call.Name != "read" || name == "" || filepath.IsAbs(name) {
		t.Fatalf("recorded call %+v: want read of a relative file_path", call)
	}
	want, err := os.ReadFile(filepath.Join(dir, "workspace", name))
	if err != nil {
		t.Fatalf("the workspace lacks the file the recording reads: %v", err)
	}
	tc := fsToolCall(t, dir, r, call.ID, "read")
	if tc["title"] != "Read "+name {
		t.Errorf("title %v, want Read %s", tc["title"], name)
	}
	locs, _ := tc["locations"].([]any)
	if len(locs) != 1 {
		t.Fatalf("locations %v, want one", tc["locations"])
	}
	loc, _ := locs[0].(map[string]any)
	if loc["line"] != float64(1) {
		t.Errorf("location line %v, want 1", loc["line"])
	}
	if got := fileIn(t, loc["path"], filepath.Base(name)); got != string(want) {
		t.Errorf("%s = %q after a read, want %q", name, got, want)
	}
	lines := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	numbered := "\n"
	for i, l := range lines {
		numbered += fmt.Sprintf("%d: %s\n", i+1, l)
	}
	numbered += fmt.Sprintf("\n(End of file - total %d lines)\n", len(lines))
	// The model's text (numbered lines, footer) is the rawOutput; the
	// card shows the lines as they are, in a fence.
	if raw, _ := tc["rawOutput"].(string); !strings.Contains(raw, numbered) {
		t.Errorf("rawOutput %q lacks the numbered lines and footer %q", raw, numbered)
	}
	content, _ := json.Marshal(tc["content"])
	fenced := "\n" + strings.Join(lines, "\n") + "\n```"
	if wantJSON, _ := json.Marshal(fenced); !strings.Contains(string(content), strings.Trim(string(wantJSON), `"`)) || strings.Contains(string(content), "<path>") {
		t.Errorf("result content %s lacks the lines in a fence %q (or shows the envelope)", content, fenced)
	}
	if len(r.PermissionRequests) != 0 {
		t.Errorf("permission requests %v for a read inside the project", r.PermissionRequests)
	}
}

// fsWrite checks fs-write: the recorded write of a new file gives a diff
// card with a null oldText and the recorded content at an absolute path,
// completed after one permission request (answered allow-once), and the
// file holding exactly that content on disk.
func fsWrite(t *testing.T, dir string, r runResult) {
	t.Helper()
	call, args := recordedCall(t, dir)
	name, _ := args["file_path"].(string)
	content, ok := args["content"].(string)
	if call.Name != "write" || name == "" || !ok {
		t.Fatalf("recorded call %+v: want write with file_path and content", call)
	}
	tc := fsToolCall(t, dir, r, call.ID, "edit")
	items, _ := tc["content"].([]any)
	if len(items) != 1 {
		t.Fatalf("content %v, want one diff", tc["content"])
	}
	d, _ := items[0].(map[string]any)
	if old, ok := d["oldText"]; d["type"] != "diff" || !ok || old != nil || d["newText"] != content {
		t.Errorf("diff %v, want oldText null and newText %q", d, content)
	}
	if got := fileIn(t, d["path"], filepath.Base(name)); got != content {
		t.Errorf("%s = %q, want %q", name, got, content)
	}
	checkAskedOnce(t, r, call.ID)
}

// sseName is the replay file answering the nth (1-based) model request.
func sseName(n int) string {
	return fmt.Sprintf("%03d.sse", n)
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestRunnerReportsBadAgent runs run.mjs against testdata/bad-agent.mjs, an
// agent that breaks the protocol on purpose, and asserts that each fault is
// reported: the interop scenarios passing means something only if it can fail.
func TestRunnerReportsBadAgent(t *testing.T) {
	env := needNode(t)
	agent := filepath.Join(env.dir, "testdata", "bad-agent.mjs")
	r, code := runNode(t, env, agent, filepath.Join(env.dir, "testdata", "bad-scenario"))
	if code != 1 {
		t.Errorf("run.mjs exit code = %d, want 1", code)
	}
	if r.ExitCode == nil || *r.ExitCode != 3 {
		t.Errorf("reported agent exit code = %v, want 3", deref(r.ExitCode))
	}
	if !reflect.DeepEqual(r.Messages, []string{"OK"}) || !reflect.DeepEqual(r.StopReasons, []string{"finished"}) {
		t.Errorf("messages %q stop reasons %q, want [OK] [finished]", r.Messages, r.StopReasons)
	}
	if r.UpdatesOutsidePrompt != 1 {
		t.Errorf("updates outside a prompt = %d, want 1 (the late chunk)", r.UpdatesOutsidePrompt)
	}
	wantErrors := []string{
		"wire: stdout line 3 is not JSON",
		"schema: notification session/update (stdout line 4) rejected by SDK schema: update.content.text:",
		`schema: response to session/prompt (stdout line 7) rejected by SDK schema: stopReason: expected one of ["end_turn",`,
		"sdk: Error handling notification",
		"protocol: tool_call_update for unknown toolCallId ghost",
		"protocol: agent_message_chunk update for session s1 outside a prompt turn",
	}
	for _, want := range wantErrors {
		if !containsPrefix(r.Errors, want) {
			t.Errorf("no error starting %q in %q", want, r.Errors)
		}
	}
	if len(r.Errors) != len(wantErrors) {
		t.Errorf("%d errors, want %d: %q", len(r.Errors), len(wantErrors), r.Errors)
	}
	if !containsPrefix(r.Warnings, "lenient: notification session/update (stdout line 5): SDK parse changed update.extraField: dropped") {
		t.Errorf("warnings %q lack the dropped extraField", r.Warnings)
	}
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
