package toolmcp

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolNames(t *testing.T) {
	long := strings.Repeat("x", 70)
	names := []string{"read", "a.b", "a_b", "a/b", "héllo", long, long + "y", "", "read"}
	got := toolNames("srv", names)
	want := map[string]string{
		"read": "mcp__srv__read",
		// a_b needs no sanitizing, so it keeps its plain form; the others
		// that sanitize to it get hashed forms.
		"a_b":   "mcp__srv__a_b",
		"héllo": "mcp__srv__h__llo",
	}
	for orig, w := range want {
		if got[orig] != w {
			t.Errorf("%q -> %q, want %q", orig, got[orig], w)
		}
	}
	if len(got) != 7 {
		t.Errorf("%d names for 7 distinct non-empty tools: %v", len(got), got)
	}
	seen := map[string]string{}
	for orig, n := range got {
		if !validName.MatchString(n) {
			t.Errorf("%q -> %q is not a valid function name", orig, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%q and %q both -> %q", orig, other, n)
		}
		seen[n] = orig
	}
	for _, orig := range []string{"a.b", "a/b", long, long + "y"} {
		if n := got[orig]; len(n) != MaxNameLen && !strings.HasPrefix(n, "mcp__srv__a_b_") {
			t.Errorf("%q -> %q: want the hashed form", orig, n)
		}
	}
	// The answer depends on the set of names only, never their order.
	rev := slices.Clone(names)
	slices.Reverse(rev)
	again := toolNames("srv", rev)
	for orig, n := range got {
		if again[orig] != n {
			t.Errorf("order changed %q: %q then %q", orig, n, again[orig])
		}
	}
}

func TestServerKeys(t *testing.T) {
	got := serverKeys([]Server{{Name: "files"}, {Name: "my server"}, {Name: "my/server"}, {Name: ""}, {Name: strings.Repeat("n", 30)}, {Name: strings.Repeat("n", 30)}, {Name: "files"}})
	want := []string{"files", "my_server", "my_server_2", "server", strings.Repeat("n", 24), strings.Repeat("n", 22) + "_2", "files_2"}
	if !slices.Equal(got, want) {
		t.Errorf("keys = %q\nwant   %q", got, want)
	}
}

func TestServerEnv(t *testing.T) {
	env := serverEnv([]string{"PATH=/bin", "DSH_API_KEY=sk-1", "GITHUB_TOKEN=g", "HOME=/h", "MODE=a"},
		[]EnvVariable{{"MODE", "b"}, {"GITHUB_TOKEN", "given"}})
	want := []string{"PATH=/bin", "HOME=/h", "MODE=b", "GITHUB_TOKEN=given"}
	if !slices.Equal(env, want) {
		t.Errorf("env = %q, want %q", env, want)
	}
}
