package sandbox

import (
	"os"
	"path/filepath"
)

// Secrets returns the paths commands may not read (Config.Hidden) for an
// agent whose state folder is stateDir ("" for none), from the agent's
// environment: its configuration folder ($XDG_CONFIG_HOME/dsh-acp, else
// ~/.config/dsh-acp: the credentials file), its state folder (the
// session logs of every project), and the credentials of other tools:
// ~/.ssh, ~/.gnupg, ~/.aws, ~/.config/gh ($XDG_CONFIG_HOME/gh), ~/.netrc,
// ~/.docker/config.json. Paths that cannot be placed (no home) are left
// out. allowed are paths of the other tools' credentials the user lets
// commands read (~/.ssh for git over ssh, say): those are left out; the
// agent's own folders never are.
func Secrets(stateDir string, allowed ...string) []string {
	home, _ := os.UserHomeDir()
	config := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(config) {
		config = ""
		if home != "" {
			config = filepath.Join(home, ".config")
		}
	}
	var out []string
	add := func(p string, own bool) {
		if !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		for _, a := range allowed {
			if !own && filepath.Clean(a) == p {
				return
			}
		}
		out = append(out, p)
	}
	if config != "" {
		add(filepath.Join(config, "dsh-acp"), true)
		add(filepath.Join(config, "gh"), false)
	}
	add(stateDir, true)
	if home != "" {
		for _, p := range []string{".ssh", ".gnupg", ".aws", ".netrc", filepath.Join(".docker", "config.json"), filepath.Join(".config", "gh")} {
			add(filepath.Join(home, p), false)
		}
	}
	return out
}

// carving is what to grant so that a grant on a folder covers all of it
// but some hidden paths (Landlock only grants, and a grant on a folder
// covers everything below it): whole are the directories and files
// granted entirely; listed are the folder and the directories on the
// way to a hidden path, which get the right to list their entries only
// (a hidden path's name stays visible, its content does not).
type carving struct {
	dirs, files, listed []string
}

// carve returns the carving of root (resolved) around hidden (resolved):
// root whole when no hidden path lies below it (a root that is itself
// hidden, or inside a hidden path, is granted whole: the grant was asked
// for it). Entries that do not
// exist when it runs are not granted (a file created in a listed folder
// later is not readable to the command); a symbolic link is granted only
// when its target neither lies in a hidden path nor holds one.
func carve(root string, hidden []string) carving {
	var c carving
	if !holdsHidden(root, hidden) {
		c.dirs = append(c.dirs, root)
		return c
	}
	c.carveInto(root, hidden)
	return c
}

// carveInto grants dir's entries but those leading to hidden, and
// listing dir.
func (c *carving) carveInto(dir string, hidden []string) {
	c.listed = append(c.listed, dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case isHidden(p, hidden):
		case holdsHidden(p, hidden):
			if e.IsDir() {
				c.carveInto(p, hidden)
			}
		case e.Type()&os.ModeSymlink != 0:
			t, err := filepath.EvalSymlinks(p)
			if err != nil || isHidden(t, hidden) || holdsHidden(t, hidden) {
				continue
			}
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				c.dirs = append(c.dirs, p)
			} else if err == nil {
				c.files = append(c.files, p)
			}
		case e.IsDir():
			c.dirs = append(c.dirs, p)
		default:
			c.files = append(c.files, p)
		}
	}
}

// isHidden reports whether p is a hidden path or below one.
func isHidden(p string, hidden []string) bool {
	for _, h := range hidden {
		if within(p, h) {
			return true
		}
	}
	return false
}

// holdsHidden reports whether a hidden path lies strictly below p.
func holdsHidden(p string, hidden []string) bool {
	for _, h := range hidden {
		if h != p && within(h, p) {
			return true
		}
	}
	return false
}

// resolveAll resolves each path (resolve: symlinks of its longest
// existing prefix), dropping empty ones.
func resolveAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if filepath.IsAbs(p) {
			out = append(out, resolve(p))
		}
	}
	return out
}
