package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/dsh-acp/dsh-acp/toolsearch"
)

// The bounds of a checkpoint outside git.
const (
	// MaxWalkFiles is how many files a walk of the project records; past
	// it, commands' changes are not looked for.
	MaxWalkFiles = 20000
	// MaxImageBytes bounds the before-images one turn keeps; a file past
	// it (or past MaxFileBytes) is listed without a diff and cannot be
	// restored.
	MaxImageBytes = 64 << 20
)

// noCopyNote is the note of a file a command changed outside git: no
// earlier copy of it was kept, so no diff is shown and /undo cannot put
// it back.
const noCopyNote = "changed by a command; no earlier copy was kept"

// fileStat is what a walk records of a file: size and modification time
// (Unix nanoseconds).
type fileStat struct {
	size, mtime int64
}

// image is a file's before-image: whether it existed, and the copy of its
// bytes in the state dir ("" when it did not exist or was too large).
type image struct {
	existed bool
	copy    string
	mode    fs.FileMode
	tooBig  bool
	noCopy  bool // no state dir to keep it in
}

// dirTurn is one turn's checkpoint of a project outside git: the walk
// before the turn's first change, and the before-images of the files its
// tools changed, kept in store.
type dirTurn struct {
	root, store string
	before      map[string]fileStat // nil when the walk passed MaxWalkFiles
	images      map[string]image    // absolute path -> before-image
	used        int64
	// after is the end of the turn's view of the files with images;
	// commandChanged the files changed without one (recordAfter,
	// Tracker.keepDone).
	after          map[string]afterSum
	commandChanged []string
}

// newDirTurn walks root and prepares store for the turn's before-images.
func newDirTurn(ctx context.Context, root, store string) (*dirTurn, error) {
	d := &dirTurn{root: root, store: store, images: map[string]image{}}
	m, err := walkStats(ctx, root)
	if err != nil {
		return d, err
	}
	d.before = m
	return d, nil
}

// errTooMany stops a walk past MaxWalkFiles.
var errTooMany = errors.New("too many files")

// walkStats records the size and mtime of every file the search tools
// would see below root (nil, nil past MaxWalkFiles).
func walkStats(ctx context.Context, root string) (map[string]fileStat, error) {
	var mu sync.Mutex
	m := map[string]fileStat{}
	err := toolsearch.WalkFiles(ctx, filepath.Clean(root), func(path, rel string) error {
		st, err := os.Stat(path)
		if err != nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if len(m) >= MaxWalkFiles {
			return errTooMany
		}
		m[rel] = fileStat{size: st.Size(), mtime: st.ModTime().UnixNano()}
		return nil
	})
	if errors.Is(err, errTooMany) {
		return nil, nil
	}
	return m, err
}

// saveBefore keeps the before-image of each path inside the root not yet
// kept this turn.
func (d *dirTurn) saveBefore(paths []string) {
	for _, p := range paths {
		p = filepath.Clean(p)
		if _, ok := d.images[p]; ok || !inside(d.root, p) {
			continue
		}
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			d.images[p] = image{}
			continue
		}
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		im := image{existed: true, mode: st.Mode().Perm()}
		if d.store == "" {
			im.noCopy = true
		} else if st.Size() > MaxFileBytes || d.used+st.Size() > MaxImageBytes {
			im.tooBig = true
		} else if b, err := os.ReadFile(p); err == nil && os.MkdirAll(d.store, 0o700) == nil {
			name := filepath.Join(d.store, strconv.Itoa(len(d.images)))
			if os.WriteFile(name, b, 0o600) == nil {
				im.copy = name
				d.used += int64(len(b))
			}
		}
		d.images[p] = im
	}
}

// inside reports whether p is root or below it.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// end lists the files that changed since the turn's checkpoint: those
// with a before-image, compared by content, and those whose size or mtime
// differ between the two walks (created ones with their content, others
// named only: no earlier copy).
func (d *dirTurn) end(ctx context.Context) ([]fileChange, error) {
	var after map[string]fileStat
	if d.before != nil {
		var err error
		if after, err = walkStats(ctx, d.root); err != nil {
			return nil, err
		}
	}
	var fcs []fileChange
	for p, im := range d.images {
		if fc, changed := d.imageChange(p, im); changed {
			fcs = append(fcs, fc)
		}
	}
	if after == nil {
		return fcs, nil
	}
	for rel, st := range after {
		p := filepath.Join(d.root, filepath.FromSlash(rel))
		if _, ok := d.images[p]; ok {
			continue
		}
		old, existed := d.before[rel]
		switch {
		case !existed:
			fc := fileChange{path: p, newOK: true}
			fc.new, fc.note = readBounded(p)
			fcs = append(fcs, fc)
		case old != st:
			fcs = append(fcs, fileChange{path: p, oldOK: true, newOK: true, note: noCopyNote})
		}
	}
	for rel := range d.before {
		p := filepath.Join(d.root, filepath.FromSlash(rel))
		if _, ok := after[rel]; !ok {
			if _, kept := d.images[p]; !kept {
				fcs = append(fcs, fileChange{path: p, oldOK: true, note: noCopyNote})
			}
		}
	}
	return fcs, nil
}

// imageChange compares the file at p with its before-image.
func (d *dirTurn) imageChange(p string, im image) (fileChange, bool) {
	fc := fileChange{path: p, oldOK: im.existed}
	cur, err := os.ReadFile(p)
	fc.newOK = err == nil
	if !fc.oldOK && !fc.newOK {
		return fc, false
	}
	if im.noCopy {
		fc.note = "no earlier copy was kept"
		return fc, true
	}
	if im.tooBig || (fc.newOK && len(cur) > MaxFileBytes) {
		fc.note = "too large to show here"
		return fc, true
	}
	if im.existed {
		old, err := os.ReadFile(im.copy)
		if err != nil {
			fc.note = "could not be read"
			return fc, true
		}
		fc.old = old
		if fc.newOK && bytes.Equal(old, cur) {
			return fc, false
		}
	}
	fc.new = cur
	return fc, true
}

// readBounded reads a file of at most MaxFileBytes, else gives a note.
func readBounded(p string) ([]byte, string) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, "could not be read"
	}
	if st.Size() > MaxFileBytes {
		return nil, "too large to show here"
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, "could not be read"
	}
	return b, ""
}

// removeDirState removes a session's before-images.
func removeDirState(dir string) error {
	err := os.RemoveAll(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
