package helper

import (
	"reflect"
	"testing"
)

// TestSpecArgs: ParseArgs reads back what Args wrote, and returns the
// command after the "--".
func TestSpecArgs(t *testing.T) {
	for _, s := range []Spec{
		{UID: 1000, GID: 1001},
		{NS: true, UID: 0, GID: 0, Landlock: true, LandlockFlags: 4, Probe: true},
		{NS: true, UID: 65534, GID: 65534, Net: true, Mask: []string{"/run/docker.sock", "/tmp/.X11-unix", "/a,b=c d"}},
		{NS: true, Mask: []string{"/run/docker.sock"}, ReadOnly: []string{"/p/.git/hooks", "/p/.git/config"}},
		{NS: true, ReadOnly: []string{"/+odd"}},
		{NS: true, ReadOnly: []string{"/p/.git/hooks"}, Pinned: []string{"/p/.git", "/@odd"}},
	} {
		args, err := s.Args()
		if err != nil {
			t.Fatal(err)
		}
		got, cmd, err := ParseArgs(append(args, "--", "/bin/sh", "sh", "--", "-c"))
		if err != nil {
			t.Fatalf("ParseArgs(%q): %v", args, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("ParseArgs(%q) = %+v, want %+v", args, got, s)
		}
		if want := []string{"/bin/sh", "sh", "--", "-c"}; !reflect.DeepEqual(cmd, want) {
			t.Errorf("command %q, want %q", cmd, want)
		}
	}
}

func TestSpecArgsRefused(t *testing.T) {
	if _, err := (Spec{NS: true, Mask: []string{"--"}}).Args(); err == nil {
		t.Error(`Args with the masked path "--": no error`)
	}
	for _, args := range [][]string{
		nil, {"--"}, {"uid=0"}, {"uid=0,bogus=1", "--"}, {"uid=x", "--"}, {"uid=4294967296", "--"}, {"uid", "--"},
	} {
		if _, _, err := ParseArgs(args); err == nil {
			t.Errorf("ParseArgs(%q): no error", args)
		}
	}
}
