// Package helper is the command sandbox's re-exec entry point: the agent
// starts its own executable (/proc/self/exe) with ExecArg as the first
// argument, and this package's init function, which runs before the rest
// of the program is initialized, becomes the helper instead of letting the
// program start. Every binary that can start a sandboxed command links this
// package (toolbash imports sandbox, which imports it), test binaries
// included, so no TestMain hook is needed anywhere.
//
// The package imports only the standard library, and its import path
// sorts before the heavy dependencies' (Go initializes packages in import
// path order, each after its imports), so the helper starts before they
// initialize: its start-up costs about as much as an empty Go program's.
//
// Protocol (agent side in package sandbox):
//
//	argv: EXE ExecArg SPEC -- PATH ARG0 ARGS...   (SPEC: JSON of Spec)
//	fd 0, 1, 2: the command's stdin, stdout, stderr
//	fd 3 (StatusFD): a pipe to the agent; the helper writes "ok\n" once the
//	   command has started, or "err TEXT\n" and exits 125 when it could not
//	   start it; then "exit N\n" (N: the raw wait status) when the command
//	   (the shell) has ended. It keeps running, reaping what the command
//	   left behind, until none of it is left.
//	fd 4 (RulesetFD): with Spec.Landlock, a Landlock ruleset to confine
//	   the command with.
//
// The helper confines the one thread it forks the command from (Landlock
// domains, like capabilities and no_new_privs, belong to threads, and a
// child inherits those of the thread that forks it): its other threads,
// which pass signals on, stay outside the domain. It is undumpable and
// the command gets no CAP_SYS_PTRACE (not even a root one), so a confined
// command cannot trace it, nor read or write its memory.
package helper

// ExecArg is the hidden first argument.
const ExecArg = "__sandbox-exec"

// File descriptors the helper is given.
const (
	StatusFD  = 3
	RulesetFD = 4
)

// Spec is how the helper sets itself up for one command.
type Spec struct {
	// NS: the helper is PID 1 of new user, PID and mount namespaces (the
	// agent cloned it so, with the capabilities to finish the job): it maps
	// UID and GID to themselves, mounts a /proc of the new PID namespace
	// and drops those capabilities before starting the command. When the
	// helper dies, the kernel kills every process left in the namespace.
	NS bool `json:"ns,omitempty"`
	// UID and GID are the agent's, mapped to themselves inside NS.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// Landlock: fd 4 holds the ruleset; LandlockFlags are the flags of
	// landlock_restrict_self(2).
	Landlock      bool   `json:"landlock,omitempty"`
	LandlockFlags uint32 `json:"landlockFlags,omitempty"`
	// Probe: set up as for a command (confinement included), report "ok"
	// and exit 0 instead of starting one.
	Probe bool `json:"probe,omitempty"`
	// Net (with NS): the agent cloned the helper into a new network
	// namespace as well, which holds only a loopback that is down: no
	// TCP, UDP or abstract unix socket of the host is reachable.
	Net bool `json:"net,omitempty"`
	// Mask (with NS) are paths the helper covers in its mount namespace
	// before starting the command: a directory with an empty read-only
	// tmpfs, anything else (a unix socket) with /dev/null. A path that
	// does not exist is passed over.
	Mask []string `json:"mask,omitempty"`
}
