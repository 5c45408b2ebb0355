package checkpoint

import (
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// Outside git a turn's record is also written to its folder in the state
// dir (manifest.json beside the before-images), so that /undo works in a
// later process too (a session loaded again).

// manifestName is the record's file in a turn's folder.
const manifestName = "manifest.json"

// manifest is a dirTurn's record as JSON.
type manifest struct {
	Root           string          `json:"root"`
	Images         []manifestImage `json:"images"`
	CommandChanged []string        `json:"commandChanged,omitempty"`
}

type manifestImage struct {
	Path    string      `json:"path"`
	Existed bool        `json:"existed"`
	Copy    string      `json:"copy,omitempty"`
	Mode    fs.FileMode `json:"mode,omitempty"`
	TooBig  bool        `json:"tooBig,omitempty"`
	NoCopy  bool        `json:"noCopy,omitempty"`
	Exists  bool        `json:"exists"` // after the turn
	Sum     string      `json:"sum"`    // after the turn, hex SHA-256
}

// save writes d's record to its folder (nothing without one).
func (d *dirTurn) save() error {
	if d.store == "" {
		return nil
	}
	m := manifest{Root: d.root, CommandChanged: d.commandChanged}
	for p, im := range d.images {
		a := d.after[p]
		m.Images = append(m.Images, manifestImage{Path: p, Existed: im.existed, Copy: im.copy, Mode: im.mode, TooBig: im.tooBig,
			NoCopy: im.noCopy, Exists: a.exists, Sum: hex.EncodeToString(a.sum[:])})
	}
	sort.Slice(m.Images, func(i, j int) bool { return m.Images[i].Path < m.Images[j].Path })
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.store, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d.store, manifestName), b, 0o600)
}

// loadDirTurn reads the record of the turn kept in store; nil when there
// is none (or it cannot be read).
func loadDirTurn(store string) *dirTurn {
	b, err := os.ReadFile(filepath.Join(store, manifestName))
	var m manifest
	if err != nil || json.Unmarshal(b, &m) != nil {
		return nil
	}
	d := &dirTurn{root: m.Root, store: store, images: map[string]image{}, after: map[string]afterSum{}, commandChanged: m.CommandChanged}
	for _, im := range m.Images {
		d.images[im.Path] = image{existed: im.Existed, copy: im.Copy, mode: im.Mode, tooBig: im.TooBig, noCopy: im.NoCopy}
		a := afterSum{exists: im.Exists}
		if sum, err := hex.DecodeString(im.Sum); err == nil && len(sum) == len(a.sum) {
			copy(a.sum[:], sum)
		}
		d.after[im.Path] = a
	}
	return d
}

// pruneTurnDirs removes the turn folders of dir (a session's folder in
// the state dir) past the newest MaxTurns.
func pruneTurnDirs(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var turns []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() {
			turns = append(turns, n)
		}
	}
	sort.Ints(turns)
	for len(turns) > MaxTurns {
		_ = os.RemoveAll(filepath.Join(dir, strconv.Itoa(turns[0])))
		turns = turns[1:]
	}
}
