// Package unpriv runs part of a test as an unprivileged user, so that file
// permissions and the kernel's access rules (a read-only file, another
// process's /proc files) bind even when the tests run as root, as CI and
// every check do. A test that needs them calls Run, which starts the test
// binary again for just that test, and InChild, which tells the child
// that it is the one to do the work:
//
//	func TestX(t *testing.T) {
//		if !unpriv.InChild(t) {
//			out := unpriv.Run(t)
//			// check out, or nothing: Run fails t when the child fails
//			return
//		}
//		// runs as uid 65534 when the tests run as root
//	}
//
// Linux and other Unix systems only (syscall.Credential).
package unpriv

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// UID and GID are the unprivileged user and group the child runs as when
// the tests run as root: 65534, "nobody" and "nogroup"/"nobody" on Linux
// distributions.
const UID, GID = 65534, 65534

// childVar names, in a child started by Run, the test it runs.
const childVar = "DSH_TEST_UNPRIV_CHILD"

// InChild reports whether this process is the child Run started for t.
// It fails t when the child runs as root after all: the checks it makes
// would then prove nothing.
func InChild(t testing.TB) bool {
	t.Helper()
	if os.Getenv(childVar) != t.Name() {
		return false
	}
	if os.Geteuid() == 0 {
		t.Fatalf("unpriv: the child running %s is root; file permissions would not bind", t.Name())
	}
	return true
}

// Run runs t's test (t.Name(), subtests included) again in a child
// process of the test binary, with env (KEY=value entries) added to the
// environment, and returns the child's combined output. The child is
// always a separate process. When the tests run as root it runs as
// UID/GID without supplementary groups, from a copy of the test binary
// that user may execute, with HOME and TMPDIR (so t.TempDir) in a
// directory it owns, and in the directory holding both; otherwise it runs
// as the current user in the same layout.
//
// Run fails t when the child cannot be started, fails, or did not run
// the test (a -test.run pattern that matched nothing); it never skips.
// On failure the child's output is shown with each line prefixed by "| "
// so that test2json does not read the child's results as the parent's.
func Run(t testing.TB, env ...string) string {
	t.Helper()
	if InChild(t) {
		t.Fatalf("unpriv.Run called in the child of %s", t.Name())
	}
	root := os.Geteuid() == 0
	dir, err := os.MkdirTemp("", "dsh-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(os.Args[0]))
	if err := copyExecutable(os.Args[0], bin); err != nil {
		t.Fatalf("unpriv: copy the test binary: %v", err)
	}
	var attr *syscall.SysProcAttr
	if root {
		if err := os.Chown(home, UID, GID); err != nil {
			t.Fatalf("unpriv: give uid %d a home directory to run the test as that user: %v", UID, err)
		}
		attr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: UID, Gid: GID, Groups: []uint32{}}}
	}
	cmd := exec.Command(bin, "-test.run="+runPattern(t.Name()), "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childVar+"="+t.Name(), "HOME="+home, "TMPDIR="+home)
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir, cmd.SysProcAttr = dir, attr
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		t.Fatalf("unpriv: the child running %s failed: %v\n%s", t.Name(), err, quote(out))
	case err != nil && root:
		t.Fatalf("unpriv: start the child as uid %d (the test needs a user file permissions bind): %v; is %s searchable by others?", UID, err, dir)
	case err != nil:
		t.Fatalf("unpriv: start the child: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()+" ") {
		t.Fatalf("unpriv: the child did not run %s:\n%s", t.Name(), quote(out))
	}
	return string(out)
}

// runPattern is the -test.run pattern matching exactly the test name
// (subtest levels split at "/").
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// quote prefixes every line of out with "| ".
func quote(out []byte) string {
	s := strings.TrimRight(string(out), "\n")
	return "| " + strings.ReplaceAll(s, "\n", "\n| ")
}

// copyExecutable copies file src to a new file dst with mode 0755.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
