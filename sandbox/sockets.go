package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// KnownSockets are the well-known pathname unix sockets (and folders of
// them) that a command under DenyNetwork does not see: neither a network
// namespace nor Landlock before ABI 9 stops a connect to a pathname
// socket, so where commands get their own mount namespace these are
// covered there: Docker's, containerd's and Podman's, the system and
// session D-Bus, the ssh agent ($SSH_AUTH_SOCK), X11 (/tmp/.X11-unix) and
// Wayland, from the agent's environment. Other pathname sockets stay
// reachable.
func KnownSockets() []string {
	runtime := os.Getenv("XDG_RUNTIME_DIR")
	if !filepath.IsAbs(runtime) {
		runtime = "/run/user/" + strconv.Itoa(os.Getuid())
	}
	out := []string{
		"/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock",
		"/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket", "/tmp/.X11-unix",
		filepath.Join(runtime, "bus"), filepath.Join(runtime, "docker.sock"), filepath.Join(runtime, "podman", "podman.sock"),
		filepath.Join(runtime, os.Getenv("WAYLAND_DISPLAY")),
	}
	if p := os.Getenv("SSH_AUTH_SOCK"); filepath.IsAbs(p) {
		out = append(out, p)
	}
	if p, ok := strings.CutPrefix(os.Getenv("DOCKER_HOST"), "unix://"); ok && filepath.IsAbs(p) {
		out = append(out, p)
	}
	for _, kv := range strings.Split(os.Getenv("DBUS_SESSION_BUS_ADDRESS"), ";") {
		for _, part := range strings.Split(kv, ",") {
			if p, ok := strings.CutPrefix(strings.TrimPrefix(part, "unix:"), "path="); ok && filepath.IsAbs(p) {
				out = append(out, p)
			}
		}
	}
	var kept []string
	for _, p := range out {
		if p != runtime && !strings.HasSuffix(p, "/") {
			kept = append(kept, filepath.Clean(p))
		}
	}
	return kept
}
