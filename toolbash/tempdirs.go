// This file keeps each session's private temporary directory (the
// TMPDIR of its commands) and removes them with the session or at exit.

package toolbash

import (
	"fmt"
	"os"

	"github.com/dsh-acp/dsh-acp/tools"
)

// tempKey keys a session's private temporary directory.
type tempKey struct{ m *Manager }

type tempDir struct {
	path string
	err  error
}

// sessionTemp returns sess's private temporary directory (one for all
// calls without a session), creating it on first use; it is removed when
// the session closes and at Shutdown.
func (m *Manager) sessionTemp(sess tools.Session) (string, error) {
	if sess == nil {
		m.tempMu.Lock()
		defer m.tempMu.Unlock()
		if m.noSessionTemp.path == "" && m.noSessionTemp.err == nil {
			m.noSessionTemp = m.newTempLocked()
		}
		return m.noSessionTemp.path, m.noSessionTemp.err
	}
	t := sess.Value(tempKey{m}, func() any {
		m.tempMu.Lock()
		t := m.newTempLocked()
		m.tempMu.Unlock()
		if t.err == nil {
			tools.OnClose(sess, func() { m.removeTemp(t.path) })
		}
		return t
	}).(tempDir)
	return t.path, t.err
}

// newTempLocked creates a private temporary directory and registers it
// (m.tempMu held).
func (m *Manager) newTempLocked() tempDir {
	dir, err := os.MkdirTemp(m.tempDir, "dsh-tmp-")
	if err != nil {
		return tempDir{err: fmt.Errorf("create the commands' temporary directory: %w", err)}
	}
	m.temps[dir] = true
	return tempDir{path: dir}
}

// removeTemp removes a private temporary directory.
func (m *Manager) removeTemp(dir string) {
	m.tempMu.Lock()
	delete(m.temps, dir)
	m.tempMu.Unlock()
	if err := os.RemoveAll(dir); err != nil {
		m.log.Warn("bash: cannot remove a temporary directory", "dir", dir, "err", err)
	}
}

// prune forgets process groups known to be gone (m.mu held).
func (m *Manager) prune() {
	for p := range m.procs {
		if p.finished() && !p.alive() {
			delete(m.procs, p)
		}
	}
}
