package layering

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docRefs are names of documents a clone does not have (the design
// notes, the interface contract and the reference pages kept beside the
// repository by its authors) and of issue numbers: a comment states what
// holds instead. The pattern is built from parts so that this file does
// not match itself.
var docRefs = regexp.MustCompile(`\b(` + strings.Join([]string{
	"INTERFACE" + `\.md`, "DESIGN" + `\.md`, "dsh-" + "behaviour", "acp-" + `protocol\.md`,
	"deepseek-" + `stream\.md`, "anchors" + `\.md`, "go-" + `deps\.md`, "style" + `\.md`,
	"reference" + "/", "issue" + ` [0-9]+\b`,
}, "|") + `)`)

// TestNoOutsideDocRefs: no Go source or script of the repository names a
// document a clone does not have, or an issue by number.
func TestNoOutsideDocRefs(t *testing.T) {
	root, _ := moduleRoot(t)
	var bad []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".sh")) || strings.HasSuffix(path, "docrefs_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := docRefs.FindString(line); m != "" && !strings.Contains(line, "../shared/fixtures") {
				rel, _ := filepath.Rel(root, path)
				bad = append(bad, rel+":"+strconv.Itoa(i+1)+": "+m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: name what holds instead of a document a clone does not have", b)
	}
}
