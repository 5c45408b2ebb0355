//go:build linux

package toolbash

import (
	"fmt"
	"syscall"
)

// prSetDumpable is prctl's PR_SET_DUMPABLE option (linux/prctl.h).
const prSetDumpable = 4

// makeUndumpable marks the agent process as not dumpable
// (prctl(PR_SET_DUMPABLE, 0)): /proc/<agent pid>/environ, mem, maps and
// the like then belong to root and are closed to processes of the same
// uid, so a command cannot read the agent's API key from
// /proc/$PPID/environ. It also disables core dumps of the agent and
// ptrace attachment to it by processes of the same uid. Processes with
// CAP_SYS_PTRACE (root) can still read those files. The flag is not
// inherited across exec, so the commands the agent starts are dumpable
// as usual. The error is the prctl errno, wrapped.
func makeUndumpable() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", errno)
	}
	return nil
}
