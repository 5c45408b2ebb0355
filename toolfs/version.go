package toolfs

import (
	"hash/maphash"
	"sync"

	"github.com/dsh-acp/dsh-acp/tools"
)

// seed keys the content hashes; versions live in memory only, so a
// per-process seed is enough.
var seed = maphash.MakeSeed()

// version is what an observation of a file saw: 64-bit hashes of content,
// and, through the editor, which side was shown. A file read or written
// on disk has sum == disk and no buffer.
type version struct {
	// sum hashes the text the model was shown: what the next edit or
	// overwrite applies to.
	sum uint64
	// disk hashes the bytes on disk at the same moment.
	disk uint64
	// buf hashes the editor's buffer at the same moment; hasBuf is false
	// when the file was not read through the editor.
	buf    uint64
	hasBuf bool
	// state is how buffer and disk related (see bufferState); bufClean
	// for a disk observation.
	state bufferState
}

// sumOf hashes b. A hasher fed the same bytes in pieces (newHasher) gives
// the same value.
func sumOf(b []byte) uint64 {
	h := newHasher()
	h.Write(b)
	return h.Sum64()
}

// newHasher returns a streaming hasher whose Sum64 equals sumOf of the
// bytes written.
func newHasher() *maphash.Hash {
	var h maphash.Hash
	h.SetSeed(seed)
	return &h
}

// diskVersion is the version of bytes observed on disk.
func diskVersion(b []byte) version {
	s := sumOf(b)
	return version{sum: s, disk: s}
}

type observedKey struct{}

// The versions a session observed are conversation state: a session that
// reattaches to the conversation shares them, a fork gets a copy.
func init() {
	tools.Carry(observedKey{}, func(v any) any { return v.(*observed).clone() })
}

// observed is one session's map from a file's real path to the version
// last observed there. Safe for concurrent use.
type observed struct {
	mu sync.Mutex
	m  map[string]version
}

// observedOf returns s's observations, or nil when s is nil (then nothing
// is remembered and every edit is refused as not observed).
func observedOf(s tools.Session) *observed {
	if s == nil {
		return nil
	}
	return s.Value(observedKey{}, func() any { return &observed{m: map[string]version{}} }).(*observed)
}

// get returns the version observed at target.
func (o *observed) get(target string) (version, bool) {
	if o == nil {
		return version{}, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	v, ok := o.m[target]
	return v, ok
}

// put records v as observed at target.
func (o *observed) put(target string, v version) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.m[target] = v
	o.mu.Unlock()
}

// clone returns a copy of o.
func (o *observed) clone() *observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := &observed{m: make(map[string]version, len(o.m))}
	for k, v := range o.m {
		c.m[k] = v
	}
	return c
}
