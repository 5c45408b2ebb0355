package toolbash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// task is a background command.
type task struct {
	id, owner string // owner: the starting session's id, "" for none
	p         *proc
	// Under Manager.mu:
	killed bool // bash_kill stopped it
	silent bool // its session is gone (or the agent is exiting): no notice
}

// startTask starts command as background task bash-N owned by the
// caller's session and returns "started background task bash-N". When it
// finishes, a notice reaches the session's next model request.
func (m *Manager) startTask(ex *tools.Exec, command, dir string, unconfined bool) (tools.Output, error) {
	p, err := m.start(ex.Session, command, dir, unconfined, nil)
	if err != nil {
		return tools.Output{}, err
	}
	owner := ""
	if ex.Session != nil {
		owner = ex.Session.ID()
	}
	m.mu.Lock()
	t := &task{id: m.nextTaskID(), owner: owner, p: p}
	m.tasks[t.id] = t
	m.mu.Unlock()
	go m.watch(t, ex.Session)
	return tools.Output{Content: []tools.Content{tools.Text("started background task " + t.id)}}, nil
}

// watch posts t's notice once it has finished (it ends with t's process);
// the notice carries leftoverLine when processes of the task's group are
// still running.
func (m *Manager) watch(t *task, sess tools.Session) {
	<-t.p.done
	m.mu.Lock()
	quiet := t.silent || t.killed
	m.mu.Unlock()
	if quiet || sess == nil {
		return
	}
	code, sig, _ := t.p.exit()
	left := ""
	if t.p.running() {
		left = " " + leftoverLine
	}
	tools.PostNotice(sess, "background bash task "+t.id+" finished "+statusLine(code, sig, false)+left+". Read its output with bash_output.")
}

type taskArgs struct {
	TaskID string `json:"task_id"`
}

var taskSpec = tools.Spec{
	{Name: "task_id", Prop: tools.Prop{Type: tools.TypeString, Required: true,
		Description: `The id the bash tool returned when the task started, e.g. "bash-1".`}},
}

// lookupTask finds a task the caller may use.
func (m *Manager) lookupTask(ex *tools.Exec, id string) (*task, error) {
	if id == "" {
		return nil, errors.New(`invalid task_id: expected a string, got ""`)
	}
	caller := ""
	if ex.Session != nil {
		caller = ex.Session.ID()
	}
	m.mu.Lock()
	t := m.tasks[id]
	m.mu.Unlock()
	switch {
	case t == nil:
		return nil, fmt.Errorf("unknown bash task %q", id)
	case t.owner != "" && t.owner != caller:
		return nil, fmt.Errorf("task %s belongs to another session", id)
	}
	return t, nil
}

func (m *Manager) outputTool() tools.Tool {
	return tools.Define(tools.Def[taskArgs]{
		Name:        "bash_output",
		Description: "Read what a background bash task has printed since the last read, and its status ([status: running], [status: completed, exit code: N], [status: killed…]).",
		// It only reads. It does move the task's read position, under
		// the output buffers' locks: two calls on one task at once split
		// the new output between them and lose none of it.
		Class:           tools.ClassReadOnly,
		ConcurrencySafe: true,
		Spec:            taskSpec,
		Execute: func(_ context.Context, ex *tools.Exec, a taskArgs) (tools.Output, error) {
			t, err := m.lookupTask(ex, a.TaskID)
			if err != nil {
				return tools.Output{}, err
			}
			return tools.Output{Content: []tools.Content{tools.Text(m.taskOutput(t))}}, nil
		},
		PresentCall: func(a taskArgs) tools.ToolCallView {
			return tools.GenericCall{Title: "Read output from background task " + a.TaskID, Kind: tools.KindExecute, RawInput: jsonText(a.TaskID)}
		},
	})
}

// taskOutput is bash_output's text:
//
//	new stdout, then "[stderr]\n" + new stderr (a newline between when
//	needed), or "(no new output)";
//	+ "\n[some output was dropped from memory; full output: PATHS]" when
//	  unread output no longer was in memory;
//	+ "\n" + the sandbox line when the task failed and this output shows
//	  a write the sandbox blocked;
//	+ "\n" + leftoverLine + "\n" when the shell has exited but a
//	  process of its group is still running (zombies do not count);
//	+ "\n" + the status line.
func (m *Manager) taskOutput(t *task) string {
	done := t.p.finished() // read the status first: the output is then complete
	out, outDropped, outPath := t.p.out[0].readNew()
	errb, errDropped, errPath := t.p.out[1].readNew()
	var b strings.Builder
	b.Write(out)
	if len(errb) > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n")
		b.Write(errb)
	}
	if b.Len() == 0 {
		b.WriteString("(no new output)")
	}
	if outDropped || errDropped {
		b.WriteString(droppedLine(outPath, errPath))
	}
	b.WriteByte('\n')
	if !done {
		b.WriteString(statusRunning())
	} else {
		code, sig, _ := t.p.exit()
		m.mu.Lock()
		killed := t.killed
		m.mu.Unlock()
		if code != 0 || sig != "" {
			if line := t.p.blockedLine(string(out) + "\n" + string(errb)); line != "" {
				b.WriteString(line + "\n")
			}
		}
		if t.p.running() {
			b.WriteString(leftoverLine + "\n")
		}
		b.WriteString(statusLine(code, sig, killed))
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// droppedLine says where the full output of a task is.
func droppedLine(paths ...string) string {
	var have []string
	for _, p := range paths {
		if p != "" {
			have = append(have, p)
		}
	}
	where := "(unavailable)"
	if len(have) > 0 {
		where = strings.Join(have, ", ")
	}
	return "\n[some output was dropped from memory; full output: " + where + "]"
}

func (m *Manager) killTool() tools.Tool {
	return tools.Define(tools.Def[taskArgs]{
		Name:        "bash_kill",
		Description: "Stop a background bash task: SIGTERM to its processes, SIGKILL 3 s later if they are still there.",
		// It stops only a task this session's agent started (lookupTask
		// refuses other ids): agent state, not the workspace.
		Class: tools.ClassAgentState,
		Spec:  taskSpec,
		Execute: func(ctx context.Context, ex *tools.Exec, a taskArgs) (tools.Output, error) {
			t, err := m.lookupTask(ex, a.TaskID)
			if err != nil {
				return tools.Output{}, err
			}
			return tools.Output{Content: []tools.Content{tools.Text(m.killTask(ctx, t))}}, nil
		},
		PresentCall: func(a taskArgs) tools.ToolCallView {
			return tools.GenericCall{Title: "Kill background task " + a.TaskID, Kind: tools.KindExecute, RawInput: jsonText(a.TaskID)}
		},
	})
}

// killTask stops task t for bash_kill and returns the tool's text. A
// running task, or one whose shell has exited but whose process group
// still has members (`server &`), gets SIGTERM and SIGKILL KillGrace later;
// killTask then waits until the shell has ended and no member of the group
// is running (zombies left for init to reap do not count), at most
// KillGrace plus a second, or until ctx ends. Texts:
//
//	"killed background task ID"             it was running
//	"task ID had already finished"          nothing of it was left
//	"task ID had already finished; killed the processes it left running"
//	"task ID had already finished; sent SIGTERM to the processes it left
//	 running (SIGKILL follows 3 s after it)"  they outlived the wait
//
// Only a task whose shell was still running is marked killed: the status
// of one that had finished stays as its shell ended.
func (m *Manager) killTask(ctx context.Context, t *task) string {
	m.mu.Lock()
	finished := t.p.finished()
	if !finished {
		t.killed = true
	}
	m.mu.Unlock()
	if finished && !t.p.running() {
		// Zombies at most, or nothing: the signal costs nothing and covers
		// a member forked while /proc was being read.
		t.p.terminate(KillGrace)
		return "task " + t.id + " had already finished"
	}
	t.p.terminate(KillGrace)
	gone := t.p.waitStopped(ctx, KillGrace+time.Second)
	switch {
	case !finished:
		return "killed background task " + t.id
	case gone:
		return "task " + t.id + " had already finished; killed the processes it left running"
	}
	return "task " + t.id + " had already finished; sent SIGTERM to the processes it left running (SIGKILL follows " +
		strconv.Itoa(int(KillGrace/time.Second)) + " s after it)"
}

// leftoverLine is added before the status line of bash_output, and to the
// end notice, when the task's shell has exited but processes it started
// are still running.
const leftoverLine = "[processes the task started are still running; bash_kill stops them]"

// jsonText is s as a JSON string.
func jsonText(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// closeHookKey marks a session whose close already stops its commands.
type closeHookKey struct{ m *Manager }
