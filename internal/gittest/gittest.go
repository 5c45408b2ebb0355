// Package gittest runs the user's git for tests' setup and checks, the
// same way in every package: with a fixed identity, no signing, and
// neither the machine's nor the user's git configuration.
package gittest

import (
	"os"
	"os/exec"
	"testing"
)

// Git runs `git -C dir args...` and returns its combined output; a
// failure fails tb with the output.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgSign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
