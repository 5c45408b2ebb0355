// Package helper is the command sandbox's re-exec entry point: the agent
// starts its own executable (/proc/self/exe) with ExecArg as the first
// argument, and this package's init function, which runs before the rest
// of the program is initialized, becomes the helper instead of letting the
// program start. Every binary that can start a sandboxed command links this
// package (toolbash imports sandbox, which imports it), test binaries
// included, so no TestMain hook is needed anywhere.
//
// Go initializes packages in import path order, each after its imports,
// and this package's path sorts before the heavy dependencies'. It imports
// only a few packages of the standard library whose own imports are done
// early (no fmt, no encoding/json: the spec is plain text; no strconv or
// strings: see package decimal), so the helper starts before the heavy
// dependencies and most of the standard library initialize: its start-up
// costs about as much as an empty Go program's.
//
// Protocol (agent side in package sandbox):
//
//	argv: EXE ExecArg SPEC MASK... -- PATH ARG0 ARGS...
//	   (SPEC MASK...: Spec.Args; SPEC holds the other fields as
//	   comma-separated key=value pairs, each MASK is one path of Spec.Mask,
//	   "+" and one path of Spec.ReadOnly, or "@" and one of Spec.Pinned)
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

import (
	"errors"

	"github.com/dsh-acp/dsh-acp/sandbox/internal/decimal"
)

// ExecArg is the hidden first argument.
const ExecArg = "__sandbox-exec"

// File descriptors the helper is given.
const (
	StatusFD  = 3
	RulesetFD = 4
)

// Spec is how the helper sets itself up for one command (its arguments:
// Args, ParseArgs).
type Spec struct {
	// NS: the helper is PID 1 of new user, PID and mount namespaces (the
	// agent cloned it so, with the capabilities to finish the job): it maps
	// UID and GID to themselves, mounts a /proc of the new PID namespace
	// and drops those capabilities before starting the command. When the
	// helper dies, the kernel kills every process left in the namespace.
	NS bool
	// UID and GID are the agent's, mapped to themselves inside NS.
	UID int
	GID int
	// Landlock: fd 4 holds the ruleset; LandlockFlags are the flags of
	// landlock_restrict_self(2).
	Landlock      bool
	LandlockFlags uint32
	// Probe: set up as for a command (confinement included), report "ok"
	// and exit 0 instead of starting one.
	Probe bool
	// Net (with NS): the agent cloned the helper into a new network
	// namespace as well, which holds only a loopback that is down: no
	// TCP, UDP or abstract unix socket of the host is reachable.
	Net bool
	// Mask (with NS) are paths the helper covers in its mount namespace
	// before starting the command: a directory with an empty read-only
	// tmpfs, anything else (a unix socket) with /dev/null. A path that
	// does not exist is passed over. Each is absolute (Args refuses
	// others, which could read as the "--" that ends them).
	Mask []string
	// ReadOnly (with NS) are paths the helper makes read-only in its
	// mount namespace (a bind mount of each over itself, remounted
	// read-only) before starting the command: files and folders inside
	// a writable folder that the command may read but not change. A path
	// that does not exist is passed over; one that cannot be made
	// read-only fails the start. Each is absolute.
	ReadOnly []string
	// Pinned (with NS) are folders the helper binds over themselves in
	// its mount namespace, writable, before making ReadOnly read-only:
	// a mount point cannot be renamed, removed or replaced, so the
	// command cannot swap a pinned folder for one of its own. A path
	// that does not exist is passed over. Each is absolute.
	Pinned []string
}

// Args is s as the helper's arguments between ExecArg and "--": the
// fields, then the masked paths. The error names a path of Mask that is
// not absolute.
func (s Spec) Args() ([]string, error) {
	fields := "uid=" + decimal.Itoa(uint64(s.UID)) + ",gid=" + decimal.Itoa(uint64(s.GID)) +
		",ns=" + flag(s.NS) + ",net=" + flag(s.Net) + ",probe=" + flag(s.Probe) +
		",landlock=" + flag(s.Landlock) + ",landlockFlags=" + decimal.Itoa(uint64(s.LandlockFlags))
	out := []string{fields}
	for _, p := range s.Mask {
		if p == "" || p[0] != '/' {
			return nil, errors.New("sandbox: masked path " + p + " is not absolute")
		}
		out = append(out, p)
	}
	for _, p := range s.ReadOnly {
		if p == "" || p[0] != '/' {
			return nil, errors.New("sandbox: read-only path " + p + " is not absolute")
		}
		out = append(out, readOnlyMark+p)
	}
	for _, p := range s.Pinned {
		if p == "" || p[0] != '/' {
			return nil, errors.New("sandbox: pinned path " + p + " is not absolute")
		}
		out = append(out, pinnedMark+p)
	}
	return out, nil
}

// readOnlyMark starts an argument of Args that is a path of ReadOnly
// (a masked path starts with its "/").
const readOnlyMark = "+"

// pinnedMark starts an argument of Args that is a path of Pinned.
const pinnedMark = "@"

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// ParseArgs reads the arguments Args wrote, up to the "--", and returns
// the spec and the arguments after the "--". The error says what is
// malformed. (No strings or strconv here: see package decimal.)
func ParseArgs(args []string) (Spec, []string, error) {
	var s Spec
	end := 0
	for end < len(args) && args[end] != "--" {
		end++
	}
	if end < 1 || end == len(args) {
		return s, nil, errors.New("usage: " + ExecArg + " SPEC MASK... -- PATH ARG0 ARGS")
	}
	for kv := range splitComma(args[0]) {
		if err := s.set(kv); err != nil {
			return s, nil, err
		}
	}
	for _, a := range args[1:end] {
		if len(a) > 1 && a[:1] == readOnlyMark {
			s.ReadOnly = append(s.ReadOnly, a[1:])
		} else if len(a) > 1 && a[:1] == pinnedMark {
			s.Pinned = append(s.Pinned, a[1:])
		} else {
			s.Mask = append(s.Mask, a)
		}
	}
	return s, args[end+1:], nil
}

// splitComma yields the comma-separated parts of s.
func splitComma(s string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := 0
		for i := 0; i <= len(s); i++ {
			if i == len(s) || s[i] == ',' {
				if !yield(s[start:i]) {
					return
				}
				start = i + 1
			}
		}
	}
}

// set sets the field a key=value pair of Args names.
func (s *Spec) set(kv string) error {
	eq := 0
	for eq < len(kv) && kv[eq] != '=' {
		eq++
	}
	n, ok := 0, eq < len(kv)
	if ok {
		n, ok = decimal.Atoi(kv[eq+1:])
	}
	if !ok || uint64(n) > 1<<32-1 {
		return errors.New("bad spec field " + kv)
	}
	switch kv[:eq] {
	case "uid":
		s.UID = n
	case "gid":
		s.GID = n
	case "ns":
		s.NS = n == 1
	case "net":
		s.Net = n == 1
	case "probe":
		s.Probe = n == 1
	case "landlock":
		s.Landlock = n == 1
	case "landlockFlags":
		s.LandlockFlags = uint32(n)
	default:
		return errors.New("bad spec field " + kv)
	}
	return nil
}
