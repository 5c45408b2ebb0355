//go:build linux

package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDenyNetworkNamespace: with DenyNetwork and namespaces a command
// has an empty network namespace: sending a UDP datagram to a listener
// of the agent on 127.0.0.1 fails at once (no route: the namespace's
// loopback is down), and the ssh agent's socket ($SSH_AUTH_SOCK, a
// well-known pathname socket) is covered; without DenyNetwork the
// datagram arrives and the socket answers. (Abstract unix sockets
// belong to the network namespace too; TestScopedAbstractSocket covers
// Landlock's scope of them.)
func TestDenyNetworkNamespace(t *testing.T) {
	needLandlock(t, 1)
	needNamespaces(t)
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed (the test's socket client)")
	}
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	got := make(chan string, 4)
	go func() {
		buf := make([]byte, 64)
		for {
			n, _, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			got <- string(buf[:n])
		}
	}()
	sock := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	port := strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)
	dir := t.TempDir()
	script := `(echo datagram > /dev/udp/127.0.0.1/` + port + `) 2>/dev/null && echo udp-sent || echo udp-failed; ` +
		python + ` -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('` + sock + `'); print('unix-connected')" 2>&1`
	for _, deny := range []bool{false, true} {
		out, _ := run(t, Policy{Config: Config{DenyNetwork: deny, Mode: WorkspaceWrite}, Project: dir, TempDir: dir}, dir, script)
		if connected := strings.Contains(out, "unix-connected"); connected == deny {
			t.Errorf("deny %v: the ssh agent's socket: %q", deny, out)
		}
		if deny {
			if !strings.Contains(out, "udp-failed") {
				t.Errorf("deny: the datagram was sent: %q", out)
			}
			continue
		}
		select {
		case <-got:
		case <-time.After(30 * time.Second):
			t.Errorf("no datagram arrived without deny: %q", out)
		}
	}
	// The agent's own socket is untouched outside.
	if _, err := os.Stat(sock); err != nil {
		t.Error(err)
	}
}
