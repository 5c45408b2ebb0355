// Package interop drives the real dsh-acp binary with the official ACP
// TypeScript SDK client (run.mjs, @agentclientprotocol/sdk) over stdio, on
// the recorded replay scenarios in ../shared/fixtures/replay.
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
	UpdateKinds          map[string]int   `json:"updateKinds"`
	UpdatesCount         int              `json:"updatesCount"`
	UpdatesOutsidePrompt int              `json:"updatesOutsidePrompt"`
	Errors               []string         `json:"errors"`
	Warnings             []string         `json:"warnings"`
	ExitCode             *int             `json:"exitCode"`
	ExitSignal           *string          `json:"exitSignal"`
	StderrTail           string           `json:"stderrTail"`
}

// runNode runs `node run.mjs agent scenario workdir` and returns its parsed
// report and node's own exit code. It fails the test when node cannot run or
// prints anything but one JSON object.
func runNode(t *testing.T, env nodeEnv, agent, scenario string) (runResult, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.node, filepath.Join(env.dir, "run.mjs"), agent, scenario, t.TempDir())
	cmd.Dir = env.dir
	cmd.Env = append(cmd.Environ(), "INTEROP_TIMEOUT_MS=60000")
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

// buildAgent builds ./cmd/dsh-acp from the repo root into a temp dir.
func buildAgent(t *testing.T, root string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "dsh-acp")
	cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/dsh-acp")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/dsh-acp: %v\n%s", err, out)
	}
	return bin
}

// scenarioCheck asserts what one fixture's NOTES.md says about a run; dir is
// the fixture folder.
type scenarioCheck func(t *testing.T, dir string, r runResult)

// scenarios maps fixture names (folders of ../shared/fixtures/replay) to
// their checks. Tool-call fixtures join here once the tools exist.
var scenarios = []struct {
	name  string
	check scenarioCheck
}{
	{"text-turn", textOnlyTurns("PONG")},
	{"multi-turn", textOnlyTurns("ONE", "TWO")},
	{"tool-call-turn", toolCallTurn},
	{"fs-read", fsRead},
	{"fs-write", fsWrite},
}

func TestSDKClientScenarios(t *testing.T) {
	env := needNode(t)
	fixtures := needFixtures(t, env.root)
	agent := buildAgent(t, env.root)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			dir := filepath.Join(fixtures, sc.name)
			r, code := runNode(t, env, agent, dir)
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
			if r.ProtocolVersion != 1 {
				t.Errorf("initialize protocolVersion = %d, want 1", r.ProtocolVersion)
			}
			if len(r.SessionIDs) != 1 || r.SessionIDs[0] == "" {
				t.Errorf("session ids = %q, want one non-empty id", r.SessionIDs)
			}
			sc.check(t, dir, r)
		})
	}
}

// textOnlyTurns checks a scenario of len(want) prompts that each make one
// model request answered by the fixture's NNN.sse (001 for the first prompt,
// ...) without tools: every prompt ends end_turn, its message text is want[i]
// (and what the recording streams), and its thought text is the recording's
// reasoning, non-empty.
func textOnlyTurns(want ...string) scenarioCheck {
	return func(t *testing.T, dir string, r runResult) {
		t.Helper()
		wantStops := make([]string, len(want))
		for i := range wantStops {
			wantStops[i] = "end_turn"
		}
		if !reflect.DeepEqual(r.StopReasons, wantStops) {
			t.Errorf("stop reasons = %q, want %q", r.StopReasons, wantStops)
		}
		if !reflect.DeepEqual(r.Messages, want) {
			t.Errorf("message text per prompt = %q, want %q", r.Messages, want)
		}
		if len(r.Thoughts) != len(want) {
			t.Fatalf("thought text for %d prompts, want %d", len(r.Thoughts), len(want))
		}
		for i := range want {
			rec, err := readRecordedTurn(filepath.Join(dir, sseName(i+1)))
			if err != nil {
				t.Fatal(err)
			}
			if rec.content != want[i] {
				t.Fatalf("fixture %s streams text %q, the check expects %q", sseName(i+1), rec.content, want[i])
			}
			if rec.reasoning == "" {
				t.Fatalf("fixture %s has no reasoning_content", sseName(i+1))
			}
			if r.Thoughts[i] != rec.reasoning {
				t.Errorf("prompt %d thought text = %q, want the recorded reasoning %q", i+1, r.Thoughts[i], rec.reasoning)
			}
		}
		if len(r.ToolCalls) != 0 || len(r.PermissionRequests) != 0 {
			t.Errorf("tool calls %v / permission requests %v in a text-only scenario", r.ToolCalls, r.PermissionRequests)
		}
		if r.UpdateKinds["agent_thought_chunk"] == 0 || r.UpdateKinds["agent_message_chunk"] == 0 {
			t.Errorf("update kinds = %v, want thought and message chunks", r.UpdateKinds)
		}
	}
}

// toolCallTurn checks tool-call-turn (NOTES.md): the model runs
// `echo SNAPSHOT_OK` with bash (a client without live terminals, in the
// default mode, so the user is asked once), then answers DONE. The card is
// an execute card titled with the command, completed, its output in a
// console fence; the thoughts are both recorded responses' reasoning.
func toolCallTurn(t *testing.T, dir string, r runResult) {
	t.Helper()
	const id = "call_00_7bmU1TAadx8ADiZJ3BqC9330"
	if !reflect.DeepEqual(r.StopReasons, []string{"end_turn"}) || !reflect.DeepEqual(r.Messages, []string{"DONE"}) {
		t.Errorf("stop reasons %q messages %q, want [end_turn] [DONE]", r.StopReasons, r.Messages)
	}
	var thoughts string
	for n := 1; n <= 2; n++ {
		rec, err := readRecordedTurn(filepath.Join(dir, sseName(n)))
		if err != nil {
			t.Fatal(err)
		}
		thoughts += rec.reasoning
	}
	if len(r.Thoughts) != 1 || r.Thoughts[0] != thoughts {
		t.Errorf("thoughts %q, want the recorded reasoning %q", r.Thoughts, thoughts)
	}
	if len(r.ToolCalls) != 1 {
		t.Fatalf("%d tool calls, want 1: %v", len(r.ToolCalls), r.ToolCalls)
	}
	c := r.ToolCalls[0]
	for key, want := range map[string]any{"toolCallId": id, "title": "echo SNAPSHOT_OK", "kind": "execute", "status": "completed", "rawOutput": "SNAPSHOT_OK\n"} {
		if c[key] != want {
			t.Errorf("tool call %s = %v, want %v", key, c[key], want)
		}
	}
	wantInput := map[string]any{"command": "echo SNAPSHOT_OK", "description": "Run echo SNAPSHOT_OK"}
	if !reflect.DeepEqual(c["rawInput"], wantInput) {
		t.Errorf("rawInput = %v, want %v", c["rawInput"], wantInput)
	}
	wantContent := []any{
		map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "Run echo SNAPSHOT_OK"}},
		map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "```console\nSNAPSHOT_OK\n```"}},
	}
	if !reflect.DeepEqual(c["content"], wantContent) {
		t.Errorf("content = %v, want %v", c["content"], wantContent)
	}
	if _, ok := c["_meta"]; ok {
		t.Errorf("terminal _meta sent to a client without the capability: %v", c["_meta"])
	}
	if len(r.PermissionRequests) != 1 || r.PermissionRequests[0]["toolCallId"] != id || r.PermissionRequests[0]["chosen"] != "allow-once" {
		t.Errorf("permission requests %v, want one for %s answered allow-once", r.PermissionRequests, id)
	}
}

// fsToolCall checks that a single-prompt fs scenario ended end_turn with
// the message DONE and exactly one tool call, with the recorded id, the
// kind given and status completed, and returns it.
func fsToolCall(t *testing.T, r runResult, id, kind string) map[string]any {
	t.Helper()
	if !reflect.DeepEqual(r.StopReasons, []string{"end_turn"}) || !reflect.DeepEqual(r.Messages, []string{"DONE"}) {
		t.Errorf("stop reasons %q, messages %q; want [end_turn] [DONE]", r.StopReasons, r.Messages)
	}
	if len(r.ToolCalls) != 1 {
		t.Fatalf("%d tool calls, want 1: %v", len(r.ToolCalls), r.ToolCalls)
	}
	tc := r.ToolCalls[0]
	if tc["toolCallId"] != id || tc["kind"] != kind || tc["status"] != "completed" {
		t.Errorf("tool call id %v kind %v status %v; want %s %s completed", tc["toolCallId"], tc["kind"], tc["status"], id, kind)
	}
	return tc
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

// fsRead checks fs-read (NOTES.md): a read card with one absolute location
// at line 1, no permission asked (a read inside the project), its result
// showing the numbered line, and greeting.txt unchanged on disk.
func fsRead(t *testing.T, dir string, r runResult) {
	t.Helper()
	tc := fsToolCall(t, r, "call_00_rYYE3EPp4X5jGLh9EMmj6459", "read")
	if tc["title"] != "Read greeting.txt" {
		t.Errorf("title %v, want Read greeting.txt", tc["title"])
	}
	locs, _ := tc["locations"].([]any)
	if len(locs) != 1 {
		t.Fatalf("locations %v, want one", tc["locations"])
	}
	loc, _ := locs[0].(map[string]any)
	if loc["line"] != float64(1) {
		t.Errorf("location line %v, want 1", loc["line"])
	}
	want, err := os.ReadFile(filepath.Join(dir, "workspace", "greeting.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fileIn(t, loc["path"], "greeting.txt"); got != string(want) {
		t.Errorf("greeting.txt = %q after a read, want %q", got, want)
	}
	content, _ := json.Marshal(tc["content"])
	if !strings.Contains(string(content), `\n1: hello\n\n(End of file - total 1 lines)\n`) {
		t.Errorf("result content %s lacks the numbered line and footer", content)
	}
	if len(r.PermissionRequests) != 0 {
		t.Errorf("permission requests %v for a read inside the project", r.PermissionRequests)
	}
}

// fsWrite checks fs-write (NOTES.md): a diff card with a null oldText and
// the new content at an absolute path, completed after one permission
// request (answered allow-once), and notes.txt holding exactly the
// content on disk.
func fsWrite(t *testing.T, _ string, r runResult) {
	t.Helper()
	const id = "call_00_4aj3gzzSDsP64mCcrn8k4591"
	tc := fsToolCall(t, r, id, "edit")
	items, _ := tc["content"].([]any)
	if len(items) != 1 {
		t.Fatalf("content %v, want one diff", tc["content"])
	}
	d, _ := items[0].(map[string]any)
	if old, ok := d["oldText"]; d["type"] != "diff" || !ok || old != nil || d["newText"] != "hello world" {
		t.Errorf("diff %v, want oldText null and newText %q", d, "hello world")
	}
	if got := fileIn(t, d["path"], "notes.txt"); got != "hello world" {
		t.Errorf("notes.txt = %q, want %q", got, "hello world")
	}
	if len(r.PermissionRequests) != 1 || r.PermissionRequests[0]["toolCallId"] != id || r.PermissionRequests[0]["chosen"] != "allow-once" {
		t.Errorf("permission requests %v, want one for %s answered allow-once", r.PermissionRequests, id)
	}
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
