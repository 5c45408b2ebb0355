// Package sandbox confines the shell commands the agent runs and makes
// sure none of their processes outlives the agent.
//
// # Confinement (Landlock)
//
// A command is started through a small re-exec of the agent's own binary
// (see package sandbox/internal/helper), which confines the command with
// Landlock just before it executes it. Under Mode WorkspaceWrite a command
// may read and execute everything, but write only
//
//   - below the project (the session cwd) and the additional directories,
//   - below its session's private temporary directory (TMPDIR points there),
//   - below the tool caches that builds write to (see Caches),
//   - to the device files a shell needs (see devices),
//
// and, with Landlock ABI 6 or later, it can neither signal processes
// outside its own sandbox (the agent, the user's other programs, other
// commands) nor connect to abstract unix sockets created outside it.
// ReadOnly leaves out the project, the additional directories and the
// caches; Off confines nothing (and sets no TMPDIR). With
// Config.DenyNetwork (ABI 4 and later) TCP bind and connect are refused
// too (UDP as well from ABI 10), and where commands get namespaces each
// runs in an empty network namespace with the well-known pathname unix
// sockets covered; other pathname sockets are not.
//
// The ruleset is built in the agent with go-landlock for exactly the ABI
// the kernel reports (never a silent best-effort downgrade) and handed to
// the re-exec as a file descriptor. Where the kernel has no Landlock,
// Probe says so and no command is confined: nothing claims otherwise.
// Landlock cannot make a part of an allowed directory read-only: files
// inside the project (.git/hooks, .envrc, ...) stay writable to commands.
//
// # No process outlives the agent
//
// The helper stays the parent of the command's whole tree: where the
// kernel allows it (unprivileged user and PID namespaces) it is PID 1 of a
// new PID namespace with its own /proc, so everything the command starts,
// daemons included, lives in that namespace, and when the helper dies (the
// agent kills it, or the agent dies: it has a parent-death signal) the
// kernel kills the rest. Elsewhere the helper is a child subreaper: orphans
// (setsid, double forks) are re-parented to it, so they are still found
// (as its descendants in /proc) and killed; but when the agent is killed
// with SIGKILL, the helper dies and what it reaped goes to init.
// The agent itself is a child subreaper as well (BecomeSubreaper), so an
// orphan whose helper was killed by someone else is caught by KillAdopted
// at exit. A cgroup per command would track processes as well, but an
// unprivileged user can create cgroups only below a delegated subtree
// (systemd's user@.service), which editors' agents and CI containers
// usually lack; namespaces and subreapers need no privilege.
package sandbox

import (
	"fmt"
	"strings"
)

// Mode is how commands are confined (the --sandbox flag).
type Mode string

// The modes.
const (
	// WorkspaceWrite: writes only to the project, the additional
	// directories, TMPDIR, the tool caches and devices (the default).
	WorkspaceWrite Mode = "workspace-write"
	// ReadOnly: writes only to TMPDIR and devices.
	ReadOnly Mode = "read-only"
	// Off: no confinement (process containment stays).
	Off Mode = "off"
)

// Modes lists the modes in the order the help text gives them.
var Modes = []Mode{WorkspaceWrite, ReadOnly, Off}

// ParseMode parses a mode name; "" is WorkspaceWrite.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return WorkspaceWrite, nil
	}
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown sandbox mode %q (want %s)", s, strings.Join(names, ", "))
}

// Config is the user's choice. The zero value is WorkspaceWrite with the
// network allowed.
type Config struct {
	Mode Mode
	// DenyNetwork gives each command an empty network namespace where
	// commands get namespaces (no TCP, UDP or abstract unix socket
	// reaches the host; the well-known pathname sockets, KnownSockets,
	// are covered), else refuses TCP bind and connect (Landlock ABI 4
	// and later; UDP too from ABI 10). Other pathname unix sockets stay
	// reachable.
	DenyNetwork bool
	// Hidden are paths (absolute) commands may not read nor write
	// (Secrets): the read and write grants are built around them, so a
	// folder on the way to one stays listable (its entries' names, not
	// theirs). A hidden path inside a folder the policy makes writable
	// is hidden there too; a writable folder inside a hidden one is
	// writable (and readable).
	Hidden []string
}

// mode is c.Mode with "" read as WorkspaceWrite.
func (c Config) mode() Mode {
	if c.Mode == "" {
		return WorkspaceWrite
	}
	return c.Mode
}

// Confines reports whether commands run under c on host h are confined
// by Landlock.
func (c Config) Confines(h Host) bool {
	return c.mode() != Off && h.LandlockABI > 0
}

// Describe is the one-line state of the sandbox for `dsh-acp --version`:
//
//	landlock ABI 7 (workspace-write)
//	landlock ABI 7 (workspace-write, network denied: an empty network namespace; reachable: pathname unix sockets but the well-known ones)
//	landlock ABI 7 (workspace-write, network denied: TCP only; reachable: UDP, unix sockets)
//	landlock ABI 3 (workspace-write; network left open: needs ABI 4; signals and abstract sockets not scoped: needs ABI 6)
//	off
//	unavailable (kernel has no Landlock)
func Describe(c Config, h Host) string {
	if c.mode() == Off {
		return "off"
	}
	if h.LandlockABI == 0 {
		return "unavailable (" + h.LandlockReason + ")"
	}
	what := string(c.mode())
	if n := DescribeNetwork(c, h); n != "" && (h.LandlockABI >= 4 || h.Namespaces) {
		what += ", " + n
	}
	var missing []string
	if c.DenyNetwork && h.LandlockABI < 4 && !h.Namespaces {
		missing = append(missing, "network left open: needs ABI 4")
	}
	if h.LandlockABI < 6 {
		missing = append(missing, "signals and abstract sockets not scoped: needs ABI 6")
	}
	if len(missing) > 0 {
		what += "; " + strings.Join(missing, "; ")
	}
	return fmt.Sprintf("landlock ABI %d (%s)", h.LandlockABI, what)
}

// DescribeProcesses is the one-line state of the process containment:
//
//	a PID namespace per command (its processes die with the agent)
//	subreaper (leftovers are killed at close and exit, not when the agent is killed: no user namespaces)
func DescribeProcesses(c Config, h Host) string {
	if h.Namespaces && c.mode() != Off {
		return "a PID namespace per command (its processes die with the agent)"
	}
	why := "sandbox off"
	if c.mode() != Off {
		why = h.NamespaceReason
	}
	return "subreaper (leftovers are killed at close and exit, not when the agent is killed: " + why + ")"
}

// DescribeNetwork says what --sandbox-network deny holds back on host h
// and what stays reachable, or "" when c does not deny the network:
//
//	network denied: an empty network namespace; reachable: pathname unix sockets but the well-known ones (...)
//	network denied: TCP only; reachable: UDP, unix sockets
func DescribeNetwork(c Config, h Host) string {
	switch {
	case !c.DenyNetwork || c.mode() == Off:
		return ""
	case h.Namespaces:
		return "network denied: an empty network namespace; reachable: pathname unix sockets but the well-known ones (docker, containerd, podman, dbus, ssh-agent, X11, Wayland)"
	case h.LandlockABI >= 10:
		return "network denied: TCP and UDP only; reachable: unix sockets"
	case h.LandlockABI >= 4:
		return "network denied: TCP only; reachable: UDP, unix sockets"
	}
	return "network left open"
}
