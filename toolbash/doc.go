// Package toolbash provides the shell tools: bash (run a command, in the
// foreground or as a background task), bash_output and bash_kill.
//
// A command runs as `bash -c COMMAND` through the sandbox helper (package
// sandbox), which leads its process group: confined by Landlock as
// Options.Sandbox says (unless the call sets dangerously_disable_sandbox),
// in its own PID namespace where the kernel allows it. It has stdin on
// /dev/null, runs in the session cwd (or the call's workdir), with an
// environment that lacks every variable whose name contains KEY, SECRET or
// TOKEN (any case) and sets NO_COLOR=1, TERM=dumb, PAGER=cat, GIT_PAGER=cat
// and (unless the sandbox is off) TMPDIR, the session's private temporary
// directory. A failed command whose output shows a write the sandbox
// refused gets one more line saying so (sandbox.Policy.Blocked). Its stdout and stderr are drained at full speed by one
// goroutine each: every stream keeps its last TailBytes bytes in memory and,
// once it has produced more, the whole output in a private spill file
// (mode 0600). While a foreground command runs, its output (both streams
// interleaved as produced) is reported live through tools.Exec.Report,
// coalesced: at most one report per LiveInterval, at most LiveChunk bytes
// each, only whole UTF-8 characters, at most LiveCap bytes per command (the
// first part as it comes, the last part when the command ends, and one
// Note between them saying what was left out); once the command has
// exited, what is left is reported at once and the result follows.
//
// A Manager owns every process it starts: Shutdown (the agent's exit) and
// KillSession (a closed session) stop them. bash_kill and KillSession also
// stop what a finished command left running (`server &`), in its process
// group or not (setsid, double forks: the helper stays their ancestor).
//
// The first New makes the agent process undumpable on Linux (prctl
// PR_SET_DUMPABLE 0) so that commands of the same uid cannot read its
// environment (the API key) at /proc/$PPID/environ; this also turns off
// the agent's core dumps and same-uid ptrace of it. Root can still read
// it.
package toolbash
