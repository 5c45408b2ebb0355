// Package gentree writes a generated source tree for the search tests and
// benchmarks: many small text files in nested folders, with nested
// ignore files (.gitignore, .ignore, .git/info/exclude) that hide some of
// them, binary files, and a needle word planted on known lines. It
// returns a manifest of what it wrote, computed from how it chose each
// file, never by matching ignore rules, so a search can be checked
// against it.
package gentree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Options shape a tree. Zero fields take the defaults given.
type Options struct {
	// Files is the number of generated files (ignored ones included;
	// the 63 ignore files and .git's files come on top); default 1000.
	Files int
	// Seed makes the tree reproducible; the same Options give the same
	// tree.
	Seed uint64
	// Needle is the word planted in some files; default "needle".
	Needle string
	// NeedleEvery: one visible text file in NeedleEvery holds the needle
	// (on one or two lines); default 100.
	NeedleEvery int
	// MeanLines is the mean number of lines of a text file (uniform in
	// [1, 2*MeanLines]); default 40. Lines are 20 to 100 bytes.
	MeanLines int
}

// File is one file the generator wrote.
type File struct {
	// Rel is the path relative to the root, with forward slashes.
	Rel string
	// Ignored: an ignore rule hides the file (a search must not see it).
	Ignored bool
	// Binary: the file holds NUL bytes (a search must skip it); binary
	// files hold the needle too.
	Binary bool
	// NeedleLines are the 1-based lines holding the needle, in order.
	NeedleLines []int
	// Lines is the number of lines of a text file.
	Lines int
}

// Manifest is what Generate wrote.
type Manifest struct {
	Files []File
	// Dirs is the number of folders made (the root not counted).
	Dirs int
	// Bytes is the total size of the files written.
	Bytes int64
}

// Visible returns the files a search must see: neither ignored nor
// binary.
func (m Manifest) Visible() []File {
	var out []File
	for _, f := range m.Files {
		if !f.Ignored && !f.Binary {
			out = append(out, f)
		}
	}
	return out
}

// words is the vocabulary of the text lines (none holds a needle that
// starts with "needle").
var words = []string{"func", "return", "value", "error", "context", "buffer", "index", "string", "result",
	"config", "server", "client", "handle", "stream", "token", "parse", "write", "read", "close", "open",
	"if", "for", "range", "nil", "true", "false", "struct", "type", "var", "const", "map", "slice",
	"alpha", "beta", "gamma", "delta", "path", "file", "line", "count", "match", "pattern", "query"}

// The ignore rules written, and which generated names they hide:
//
//	/.gitignore          build/  *.log  /vendor/
//	/.git/info/exclude   secret-*.txt
//	/pkgK/.gitignore     *.tmp  !keep.tmp
//	/pkgK/subJ/.ignore   generated/   (J even)
const (
	rootGitignore = "# generated\nbuild/\n*.log\n/vendor/\n"
	gitExclude    = "secret-*.txt\n"
	pkgGitignore  = "*.tmp\n!keep.tmp\n"
	subIgnore     = "generated/\n"
)

// Generate writes a tree under root (created if missing; it should be
// empty) and returns its manifest. Errors are the file system's.
func Generate(root string, o Options) (Manifest, error) {
	o = withDefaults(o)
	b := &builder{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)), dirs: map[string]bool{}}
	b.plain(".gitignore", rootGitignore)
	b.plain(".git/info/exclude", gitExclude)
	b.plain(".git/HEAD", "ref: refs/heads/main\n"+o.Needle+"\n")
	for i := 0; i < o.Files; i++ {
		b.file(i)
	}
	for k := 0; k < 10; k++ {
		b.plain(fmt.Sprintf("pkg%d/.gitignore", k), pkgGitignore)
		for j := 0; j < 10; j += 2 {
			b.plain(fmt.Sprintf("pkg%d/sub%d/.ignore", k, j), subIgnore)
		}
	}
	err := b.writeOut(root) // it counts the folders into b.m
	return b.m, err
}

// withDefaults fills o's unset fields with their defaults.
func withDefaults(o Options) Options {
	if o.Files <= 0 {
		o.Files = 1000
	}
	if o.Needle == "" {
		o.Needle = "needle"
	}
	if o.NeedleEvery <= 0 {
		o.NeedleEvery = 100
	}
	if o.MeanLines <= 0 {
		o.MeanLines = 40
	}
	return o
}

// builder plans a tree: the manifest, the folders and the files to
// write.
type builder struct {
	o           Options
	rng         *rand.Rand
	m           Manifest
	dirs        map[string]bool // folders to make, by path below the root
	jobs        []job
	visibleText int // visible text files planned so far
}

// job is one file to write.
type job struct {
	rel  string
	data []byte
}

// write plans the file rel with its folders.
func (b *builder) write(rel string, data []byte) {
	for d := filepath.Dir(rel); d != "." && !b.dirs[d]; d = filepath.Dir(d) {
		b.dirs[d] = true
	}
	b.jobs = append(b.jobs, job{rel, data})
}

// plain writes a file of the tree's own (an ignore file, git's files)
// and lists it; .git/ is hidden from every search.
func (b *builder) plain(rel, data string) {
	f := File{Rel: rel, Ignored: strings.HasPrefix(rel, ".git/"), Lines: bytes.Count([]byte(data), []byte("\n"))}
	b.m.Files = append(b.m.Files, f)
	b.m.Bytes += int64(len(data))
	b.write(rel, []byte(data))
}

// file plans the tree's i-th generated file. Folders: pkg0..pkg9 /
// sub0..sub9 / leaf0..leaf9 (1110 folders), the files spread over the
// leaves and a few at each level above.
func (b *builder) file(i int) {
	f := placed(i)
	var data []byte
	if f.Binary {
		data = []byte("\x7fELF\x00\x00\x01" + b.o.Needle + "\x00\n" + b.o.Needle + "\n")
	} else {
		// Ignored files hold the needle: a search that sees them
		// reports them.
		plant := f.Ignored || b.visibleText%b.o.NeedleEvery == 0
		data, f.Lines, f.NeedleLines = text(b.rng, b.o, plant)
		if !f.Ignored {
			b.visibleText++
		}
	}
	if f.Ignored {
		// Only visible files report needle lines.
		f.NeedleLines = nil
	}
	b.m.Bytes += int64(len(data))
	b.m.Files = append(b.m.Files, f)
	b.write(f.Rel, data)
}

// placed is the i-th generated file's path and kind.
func placed(i int) File {
	k, j, l := i%10, (i/10)%10, (i/100)%10
	dir := fmt.Sprintf("pkg%d/sub%d/leaf%d", k, j, l)
	name := fmt.Sprintf("f%d.txt", i)
	f := File{}
	switch r := i % 97; {
	case r == 1:
		dir, name, f.Ignored = fmt.Sprintf("pkg%d/build", k), fmt.Sprintf("out%d.txt", i), true
	case r == 2:
		name, f.Ignored = fmt.Sprintf("run%d.log", i), true
	case r == 3:
		dir, name, f.Ignored = "vendor/lib", fmt.Sprintf("v%d.go", i), true
	case r == 4:
		name, f.Ignored = fmt.Sprintf("secret-%d.txt", i), true
	case r == 5:
		name, f.Ignored = fmt.Sprintf("scratch%d.tmp", i), true
	case r == 6:
		dir = fmt.Sprintf("pkg%d/sub%d/leaf%d/k%d", k, j, l, i)
		name = "keep.tmp"
	case r == 7 && j%2 == 0:
		dir, f.Ignored = fmt.Sprintf("pkg%d/sub%d/generated", k, j), true
	case r == 8:
		dir = fmt.Sprintf("pkg%d/sub%d", k, j)
	case r == 9:
		name, f.Binary = fmt.Sprintf("blob%d.bin", i), true
	case r == 10:
		// A vendor folder below the root is not hidden: "/vendor/" is
		// anchored to the root.
		dir = fmt.Sprintf("pkg%d/vendor", k)
	}
	f.Rel = dir + "/" + name
	return f
}

// writeOut makes the folders under root, then writes the files in
// parallel; it returns the first error.
func (b *builder) writeOut(root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	for d := range b.dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
		if d != ".git" && d != ".git/info" {
			b.m.Dirs++
		}
	}
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	ch := make(chan job, 256)
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for j := range ch {
				if err := os.WriteFile(filepath.Join(root, j.rel), j.data, 0o644); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for _, j := range b.jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	return first
}

// text makes one text file; with plant, the needle goes on one or two
// lines. It returns the data, its line count and the needle lines.
func text(rng *rand.Rand, o Options, plant bool) ([]byte, int, []int) {
	n := 1 + rng.IntN(2*o.MeanLines)
	var at []int
	if plant {
		at = append(at, 1+rng.IntN(n))
		if n > 1 && rng.IntN(3) == 0 {
			if second := 1 + rng.IntN(n); second != at[0] {
				at = append(at, second)
			}
		}
		if len(at) == 2 && at[1] < at[0] {
			at[0], at[1] = at[1], at[0]
		}
	}
	var b bytes.Buffer
	next := 0
	for line := 1; line <= n; line++ {
		width := 20 + rng.IntN(81)
		start := b.Len()
		if next < len(at) && at[next] == line {
			b.WriteString("\t// " + o.Needle + " here ")
			next++
		}
		for b.Len()-start < width {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.Bytes(), n, at
}
