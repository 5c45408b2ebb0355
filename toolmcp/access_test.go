package toolmcp

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestPathAccess: every string of the arguments that looks like a path
// (absolute, ~, file://, a ".." component), at any depth, keys too, is
// handed to the permission check; other strings are not.
func TestPathAccess(t *testing.T) {
	home, _ := os.UserHomeDir()
	d := &toolDef{}
	acc, ok := d.pathAccess(json.RawMessage(`{"a":"plain","b":["/etc/passwd",{"c":"file:///x/y%20z"}],"~/k":"../up","d":"x/../../y","e":"a..b","f":"~bob/x","g":3}`))
	if !ok {
		t.Fatal("not ok")
	}
	slices.Sort(acc.Paths)
	want := []string{"../up", "/etc/passwd", "/x/y z", "/~bob/x", home + "/k", "x/../../y"}
	slices.Sort(want)
	if !slices.Equal(acc.Paths, want) {
		t.Errorf("paths %q, want %q", acc.Paths, want)
	}
	if _, ok := d.pathAccess(json.RawMessage(`{`)); ok {
		t.Error("invalid JSON: ok")
	}
	// A key given twice (the registry refuses the call): its last value
	// counts, as JSON decoding gives it.
	if acc, ok := d.pathAccess(json.RawMessage(`{"p":"/a","p":"/b"}`)); !ok || !slices.Equal(acc.Paths, []string{"/b"}) {
		t.Errorf("a key given twice: %q, %v", acc.Paths, ok)
	}
}
