package sandbox

import "os"

// AgentVar is set on Linux in every command's environment to the agent's
// pid and the command's Owner, as PID or PID:OWNER (Owner ""); it marks
// the processes KillAdopted(owner) may kill. Elsewhere nothing sets it.
const AgentVar = "DSH_SANDBOX_AGENT"

// Command is one command to start.
type Command struct {
	// Path is the program (absolute, e.g. LookPath("bash")); Args its
	// argv, Args[0] included.
	Path string
	Args []string
	// Dir is the working directory ("" for the agent's); Env the
	// environment (KEY=value).
	Dir string
	Env []string
	// Stdout and Stderr receive the output; stdin is /dev/null.
	Stdout, Stderr *os.File
	// Policy confines it on Linux (its Config.Mode Off for none); it is
	// not applied elsewhere.
	Policy Policy
	// Owner is who starts it (a token from NewOwner, or ""): on Linux it
	// is part of the AgentVar marker, and KillAdopted(Owner) kills what
	// the command leaves behind; elsewhere it is carried for the API's
	// sake (there is no sweep).
	Owner string
}

// Pid is the id of the process Start started: on Linux the helper's (the
// process group leader) or, when started directly, the command's;
// elsewhere the command's (on Unix, also its process group's id).
func (p *Process) Pid() int { return p.pid }

// Exited is closed once the process Pid names (the helper, or the
// command itself) has been reaped: from then on its pid may belong to
// another process.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Reaped reports whether Exited is closed.
func (p *Process) Reaped() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}
