//go:build linux

package helper

import (
	"errors"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/dsh-acp/dsh-acp/sandbox/internal/decimal"
	"github.com/dsh-acp/dsh-acp/sandbox/internal/proctree"
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == ExecArg {
		os.Exit(runHelper(os.Args[2:]))
	}
}

// prctl options and other constants of linux/prctl.h and
// linux/capability.h.
const (
	prCapbsetDrop       = 24
	prSetDumpable       = 4
	prSetName           = 15
	prSetNoNewPrivs     = 38
	prSetChildSubreaper = 36
	linuxCapV3          = 0x20080522
	capSysPtrace        = 19
	sysLandlockRestrict = 446 // landlock_restrict_self, every architecture
)

func prctl(op, arg uintptr) error {
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, op, arg, 0, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

// runHelper is the helper: set up, start the command, report, reap.
func runHelper(args []string) int {
	// Catch the signals the agent sends to the process group before
	// anything else: as PID 1 of a namespace the helper would not even
	// receive them otherwise, and elsewhere they would end it.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	syscall.CloseOnExec(StatusFD)
	status := os.NewFile(StatusFD, "status")
	fail := func(msg string) int {
		_, _ = status.WriteString("err " + msg + "\n")
		return 125
	}
	spec, cmd, err := ParseArgs(args)
	if err != nil {
		return fail(err.Error())
	}
	if len(cmd) < 2 && !spec.Probe {
		return fail("no command")
	}
	// Credentials are per thread, and the command inherits those of the
	// thread that forks it: everything below happens on this one.
	runtime.LockOSThread()
	if spec.NS {
		if err := enterNamespaces(spec.UID, spec.GID); err != nil {
			return fail("namespaces: " + err.Error())
		}
		if err := mask(spec.Mask); err != nil {
			return fail("mask: " + err.Error())
		}
		if err := pin(spec.Pinned); err != nil {
			return fail("pin: " + err.Error())
		}
		if err := readOnly(spec.ReadOnly); err != nil {
			return fail("read-only: " + err.Error())
		}
	} else if err := prctl(prSetChildSubreaper, 1); err != nil {
		return fail("prctl(PR_SET_CHILD_SUBREAPER): " + err.Error())
	}
	// Undumpable: a command of the same uid can neither trace the helper
	// nor read its /proc files (the environment included).
	if err := prctl(prSetDumpable, 0); err != nil {
		return fail("prctl(PR_SET_DUMPABLE): " + err.Error())
	}
	name := []byte("dsh-sandbox\x00")
	_ = prctl(prSetName, uintptr(unsafe.Pointer(&name[0])))

	if err := confineThread(spec); err != nil {
		return fail(err.Error())
	}
	if spec.Probe {
		_, _ = status.WriteString("ok\n")
		return 0
	}
	pid, err := syscall.ForkExec(cmd[0], cmd[1:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return fail("start " + cmd[0] + ": " + err.Error())
	}
	_, _ = status.WriteString("ok\n")
	// Hold no copy of the output pipes: they end when the command and what
	// it started close them.
	if null, err := syscall.Open("/dev/null", syscall.O_RDWR|syscall.O_CLOEXEC, 0); err == nil {
		_ = syscall.Dup3(null, 1, 0)
		_ = syscall.Dup3(null, 2, 0)
		_ = syscall.Close(null)
	}
	go forward(sigs)
	return reap(pid, status)
}

// forward passes each signal the helper receives on to the processes of
// its tree outside its own process group (those that left it with
// setsid or setpgid): the group itself got the signal from the agent.
func forward(sigs <-chan os.Signal) {
	self, pgid := os.Getpid(), syscall.Getpgrp()
	for s := range sigs {
		if sig, ok := s.(syscall.Signal); ok {
			_, _ = proctree.Signal(self, sig, pgid)
		}
	}
}

// reap waits for every child (as subreaper or namespace init, everything
// the command leaves behind becomes one), reports the command's own end on
// status, and returns once no child is left, with the command's exit code
// (128 plus the signal when one killed it).
func reap(cmdPid int, status *os.File) int {
	code := 0
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return code
		}
		if pid != cmdPid {
			continue
		}
		_, _ = status.WriteString("exit " + decimal.Itoa(uint64(uint32(ws))) + "\n")
		_ = status.Close()
		if ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ws.ExitStatus()
		}
	}
}

// enterNamespaces finishes the new user, PID and mount namespaces the
// agent cloned the helper into: it maps uid and gid to themselves (the
// helper holds the capabilities for that as ambient ones, since its uid
// had no mapping when it was executed), makes the mounts slaves of the
// outside ones (nothing mounted here propagates out), mounts a /proc that
// shows this PID namespace, and clears the inheritable and so the ambient
// capabilities of this thread, so that the command gets none of them.
func enterNamespaces(uid, gid int) error {
	for _, w := range []struct{ file, text string }{
		{"/proc/self/setgroups", "deny"},
		{"/proc/self/gid_map", decimal.Itoa(uint64(gid)) + " " + decimal.Itoa(uint64(gid)) + " 1\n"},
		{"/proc/self/uid_map", decimal.Itoa(uint64(uid)) + " " + decimal.Itoa(uint64(uid)) + " 1\n"},
	} {
		if err := os.WriteFile(w.file, []byte(w.text), 0); err != nil {
			return err
		}
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_SLAVE, ""); err != nil {
		return errors.New("make / a slave mount: " + err.Error())
	}
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return errors.New("mount /proc: " + err.Error())
	}
	hdr, data, err := capGet()
	if err != nil {
		return err
	}
	data[0].inheritable, data[1].inheritable = 0, 0
	return capSet(&hdr, &data)
}

// confineThread confines this thread, from which the command is forked
// and which then only reaps: without CAP_SYS_PTRACE (in any set, the
// bounding one included, so that not even a root command gets it back),
// and, with a ruleset, with no_new_privs and the Landlock domain. The
// helper's other threads stay outside the domain (they pass signals on);
// the process is undumpable, so a command, which lacks CAP_SYS_PTRACE,
// can neither trace the helper nor touch its memory (/proc/<pid>/mem,
// process_vm_writev).
func confineThread(spec Spec) error {
	hdr, data, err := capGet()
	if err != nil {
		return err
	}
	mask := ^uint32(1 << capSysPtrace)
	data[0].effective &= mask
	data[0].permitted &= mask
	data[0].inheritable &= mask
	if err := capSet(&hdr, &data); err != nil {
		return err
	}
	if err := prctl(prCapbsetDrop, capSysPtrace); err != nil && err != syscall.EPERM {
		// EPERM: no CAP_SETPCAP, and then no way to regain CAP_SYS_PTRACE
		// either.
		return errors.New("prctl(PR_CAPBSET_DROP): " + err.Error())
	}
	if !spec.Landlock {
		return nil
	}
	if err := prctl(prSetNoNewPrivs, 1); err != nil {
		return errors.New("prctl(PR_SET_NO_NEW_PRIVS): " + err.Error())
	}
	if _, _, errno := syscall.RawSyscall(sysLandlockRestrict, RulesetFD, uintptr(spec.LandlockFlags), 0); errno != 0 {
		return errors.New("landlock_restrict_self: " + errno.Error())
	}
	return syscall.Close(RulesetFD)
}

type capHeader struct {
	version uint32
	pid     int32
}

type capData [2]struct{ effective, permitted, inheritable uint32 }

// capGet and capSet read and set this thread's capabilities.
func capGet() (capHeader, capData, error) {
	hdr := capHeader{version: linuxCapV3}
	var data capData
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); errno != 0 {
		return hdr, data, errors.New("capget: " + errno.Error())
	}
	return hdr, data, nil
}

func capSet(hdr *capHeader, data *capData) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(hdr)), uintptr(unsafe.Pointer(&data[0])), 0); errno != 0 {
		return errors.New("capset: " + errno.Error())
	}
	return nil
}

// mask covers each of paths in this mount namespace (see Spec.Mask).
func mask(paths []string) error {
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			err = syscall.Mount("tmpfs", p, "tmpfs", syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "size=4k,mode=0555")
		} else {
			err = syscall.Mount("/dev/null", p, "", syscall.MS_BIND, "")
		}
		if err != nil {
			return errors.New(p + ": " + err.Error())
		}
	}
	return nil
}

// pin binds each of paths over itself in this mount namespace (see
// Spec.Pinned), so that it is a mount point the command cannot rename,
// remove or replace; it stays writable.
func pin(paths []string) error {
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := syscall.Mount(p, p, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return errors.New(p + ": " + err.Error())
		}
	}
	return nil
}

// readOnly makes each of paths read-only in this mount namespace (see
// Spec.ReadOnly): a bind mount of it over itself, remounted read-only
// with the flags its mount has (a user namespace may not clear them).
func readOnly(paths []string) error {
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		var st syscall.Statfs_t
		if err := syscall.Statfs(p, &st); err != nil {
			return errors.New(p + ": " + err.Error())
		}
		if err := syscall.Mount(p, p, "", syscall.MS_BIND, ""); err != nil {
			return errors.New(p + ": " + err.Error())
		}
		flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY)
		for _, f := range [][2]uintptr{{stNoSUID, syscall.MS_NOSUID}, {stNoDev, syscall.MS_NODEV}, {stNoExec, syscall.MS_NOEXEC},
			{stNoATime, syscall.MS_NOATIME}, {stNoDirATime, syscall.MS_NODIRATIME}, {stRelATime, syscall.MS_RELATIME}} {
			if uintptr(st.Flags)&f[0] != 0 {
				flags |= f[1]
			}
		}
		if err := syscall.Mount("", p, "", flags, ""); err != nil {
			return errors.New(p + ": " + err.Error())
		}
	}
	return nil
}

// The statfs(2) mount flags readOnly keeps (ST_* of <sys/statvfs.h>).
const (
	stNoSUID     = 0x2
	stNoDev      = 0x4
	stNoExec     = 0x8
	stNoATime    = 0x400
	stNoDirATime = 0x800
	stRelATime   = 0x1000
)
