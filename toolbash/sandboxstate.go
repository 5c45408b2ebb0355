// This file is what the manager knows of the sandbox: the kernel's
// abilities (probed at the first need), whether commands are confined,
// and the one warning a session gets when they are not as configured.

package toolbash

import (
	"github.com/dsh-acp/dsh-acp/sandbox"
	"github.com/dsh-acp/dsh-acp/tools"
)

// Host is what the kernel offers for confining commands (sandbox.Probe).
// The first call probes (the sandbox helper started twice, a few
// milliseconds; later calls and other Managers share the answer) and logs
// what it found: the warning of SandboxWarning, or the sandbox's state at
// info. A command's start and the bash tool's description (the model's
// first request) ask for it; nothing earlier does.
func (m *Manager) Host() sandbox.Host {
	h := sandbox.Probe()
	m.probeLog.Do(func() {
		if w := m.warning(h); w != "" {
			m.log.Warn(w)
		} else {
			m.log.Info("bash: commands run through the sandbox helper", "sandbox", sandbox.Describe(m.sandbox, h),
				"processes", sandbox.DescribeProcesses(m.sandbox, h))
		}
	})
	return h
}

// Confined reports whether commands run confined by the kernel (the
// sandbox mode is not off and the kernel has Landlock).
func (m *Manager) Confined() bool { return m.sandbox.Confines(m.Host()) }

// SandboxWarning is what a session should tell the user once (a notice,
// or a log line) when commands will not be confined as configured: the
// kernel has no usable Landlock; or, under --sandbox-network deny, what
// stays reachable (sandbox.DescribeNetwork). It is "" when they are
// confined with the network allowed, and when the user chose --sandbox
// off. It never waits for the probe (a session
// opens without it): before the probe it judges by what the kernel says
// of Landlock alone (sandbox.Quick); should the probe then find Landlock
// refused to the helper, the first command's session is told (see
// noteProbe).
func (m *Manager) SandboxWarning() string {
	_, probed := sandbox.Probed()
	w := m.warning(sandbox.Quick())
	if !probed && w == "" {
		m.guessed.Store(true)
	}
	return w
}

// noteKey marks a session told by noteProbe.
type noteKey struct{ m *Manager }

// noteProbe tells sess, once, that its commands run unconfined after all
// when SandboxWarning said nothing before the probe and the probe then
// found Landlock refused to the helper (it needs Host, so the caller is
// about to start a command anyway).
func (m *Manager) noteProbe(sess tools.Session) {
	if sess == nil || !m.guessed.Load() {
		return
	}
	w := m.warning(m.Host())
	if w == "" {
		return
	}
	sess.Value(noteKey{m}, func() any {
		tools.Notify(sess, tools.Notice{Severity: tools.NoticeWarning, Title: "Shell commands run without a sandbox", Description: w})
		return true
	})
}

// warning is SandboxWarning's sentence for host h.
func (m *Manager) warning(h sandbox.Host) string {
	mode, _ := sandbox.ParseMode(string(m.sandbox.Mode))
	confined := m.sandbox.Confines(h)
	if mode != sandbox.Off && confined && m.sandbox.DenyNetwork {
		return "shell commands: " + sandbox.DescribeNetwork(m.sandbox, h)
	}
	if mode == sandbox.Off || confined {
		return ""
	}
	return "shell commands run without a sandbox (" + h.LandlockReason + "); only the permission checks guard what they do"
}
