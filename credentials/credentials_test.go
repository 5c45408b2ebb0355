package credentials

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestDefaultPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		env  map[string]string
		want string
		err  bool
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"}, "/x/cfg/dsh-acp/credentials", false},
		{map[string]string{"XDG_CONFIG_HOME": "relative", "HOME": "/home/u"}, "/home/u/.config/dsh-acp/credentials", false},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.config/dsh-acp/credentials", false},
		{map[string]string{}, "", true},
	}
	for _, c := range cases {
		got, err := DefaultPath(env(c.env))
		if got != filepath.FromSlash(c.want) || (err != nil) != c.err {
			t.Errorf("DefaultPath(%v) = %q, %v; want %q (error %v)", c.env, got, err, c.want, c.err)
		}
	}
}

func TestSaveLoadRemove(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "a", "b", "credentials")}
	if k, err := s.Load("https://api.deepseek.com"); k != "" || err != nil {
		t.Fatalf("Load without a file = %q, %v", k, err)
	}
	if err := s.Save("https://api.deepseek.com/", "sk-one"); err != nil {
		t.Fatal(err)
	}
	if err := s.Save("http://localhost:8000/v1", "sk-two"); err != nil {
		t.Fatal(err)
	}
	for base, want := range map[string]string{
		"https://api.deepseek.com": "sk-one", "https://api.deepseek.com//": "sk-one",
		"http://localhost:8000/v1": "sk-two", "https://openrouter.ai/api/v1": "",
	} {
		if k, err := s.Load(base); k != want || err != nil {
			t.Errorf("Load(%s) = %q, %v; want %q", base, k, err, want)
		}
	}
	if runtime.GOOS != "windows" {
		st, _ := os.Stat(s.Path)
		dst, _ := os.Stat(filepath.Dir(s.Path))
		if st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
			t.Errorf("modes file %v dir %v, want 0600 and 0700", st.Mode(), dst.Mode())
		}
	}
	if ok, err := s.Remove("https://api.deepseek.com"); !ok || err != nil {
		t.Errorf("Remove = %v, %v", ok, err)
	}
	if k, _ := s.Load("http://localhost:8000/v1"); k != "sk-two" {
		t.Errorf("the other endpoint's key is gone: %q", k)
	}
	if ok, err := s.Remove("https://api.deepseek.com"); ok || err != nil {
		t.Errorf("second Remove = %v, %v; want false, nil", ok, err)
	}
	if ok, err := s.Remove("http://localhost:8000/v1"); !ok || err != nil {
		t.Errorf("last Remove = %v, %v", ok, err)
	}
	if _, err := os.Stat(s.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file stays once empty: %v", err)
	}
	left, _ := os.ReadDir(filepath.Dir(s.Path))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestBadFiles: every unusable file is a *FileError naming the file,
// without a byte of its content; Save replaces it; Remove removes it.
func TestBadFiles(t *testing.T) {
	const secret = "sk-must-not-show"
	cases := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
	}{
		{"not JSON", "DSH_API_KEY=" + secret, 0o600, "is not valid JSON (at byte 1)"},
		{"wrong shape", `["` + secret + `"]`, 0o600, "is not a dsh-acp credentials file"},
		{"no endpoints", `{"api_key":"` + secret + `"}`, 0o600, `no "endpoints" object`},
		{"bad key", `{"endpoints":{"https://x":{"api_key":"` + secret + ` with space"}}}`, 0o600, "unusable key for https://x (the key has a space, control or non-ASCII character at byte 17)"},
		{"empty key", `{"endpoints":{"https://x":{"api_key":""}}}`, 0o600, "the key is empty"},
		{"group readable", `{"endpoints":{"https://x":{"api_key":"` + secret + `"}}}`, 0o640, "is open to other users (mode 0640; `chmod 600` it)"},
		{"world writable", `{"endpoints":{"https://x":{"api_key":"` + secret + `"}}}`, 0o602, "mode 0602"},
		{"too large", `{"endpoints":{}}` + strings.Repeat(" ", maxFileSize), 0o600, "larger than a credentials file can be"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if runtime.GOOS == "windows" && c.mode != 0o600 {
				t.Skip("Windows has no permission bits to check")
			}
			s := Store{Path: filepath.Join(t.TempDir(), "credentials")}
			if err := os.WriteFile(s.Path, []byte(c.content), c.mode); err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod(s.Path, c.mode)
			_, err := s.Load("https://x")
			var fe *FileError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), s.Path) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load = %v; want a FileError naming %s and %q", err, s.Path, c.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the content: %v", err)
			}
			src := Source{Store: s, BaseURL: "https://x"}
			if _, _, err := src.Key(); !errors.As(err, &fe) {
				t.Errorf("Source.Key = %v, want the FileError", err)
			}
			if err := s.Save("https://x", "sk-new"); err != nil {
				t.Fatalf("Save over a bad file: %v", err)
			}
			if k, err := s.Load("https://x"); k != "sk-new" || err != nil {
				t.Errorf("after Save: %q, %v", k, err)
			}
			_ = os.WriteFile(s.Path, []byte(c.content), c.mode)
			_ = os.Chmod(s.Path, c.mode)
			if ok, err := s.Remove("https://x"); !ok || err != nil {
				t.Errorf("Remove of a bad file = %v, %v", ok, err)
			}
			if _, err := os.Stat(s.Path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("bad file left after Remove: %v", err)
			}
		})
	}
	// A directory where the file should be.
	dir := t.TempDir()
	if _, err := (Store{Path: dir}).Load("https://x"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Load of a directory = %v", err)
	}
}

func TestSourceOrder(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "credentials")}
	env := map[string]string{}
	src := Source{Store: s, BaseURL: "https://x", Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	if _, _, err := src.Key(); !errors.Is(err, ErrNoKey) {
		t.Fatalf("no key anywhere = %v, want ErrNoKey", err)
	}
	for _, w := range []string{"dsh-acp login", "DSH_API_KEY", "DEEPSEEK_API_KEY"} {
		if !strings.Contains(ErrNoKey.Error(), w) {
			t.Errorf("ErrNoKey does not name %s", w)
		}
	}
	_ = s.Save("https://x", "sk-file")
	check := func(key string, origin Origin) {
		t.Helper()
		k, o, err := src.Key()
		if k != key || o != origin || err != nil {
			t.Errorf("Key = %q, %q, %v; want %q from %q", k, o, err, key, origin)
		}
	}
	check("sk-file", Origin(s.Path))
	env["DEEPSEEK_API_KEY"] = "sk-ds"
	check("sk-ds", EnvDeepSeekKey)
	env["DSH_API_KEY"] = ""
	check("sk-ds", EnvDeepSeekKey)
	env["DSH_API_KEY"] = "sk-dsh"
	check("sk-dsh", EnvKey)
	if src.EnvOrigin() != EnvKey {
		t.Errorf("EnvOrigin = %q", src.EnvOrigin())
	}
	if k, _ := (Source{Store: Store{}, BaseURL: "https://x"}).APIKey(); k != "" {
		t.Errorf("a store without a path gave %q", k)
	}
}

func TestValidKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"sk-0123abcdEF": true, "": false, "sk one": false, "sk\tone": false, "sk-é": false,
		"sk-\x7f": false, strings.Repeat("k", 4096): true, strings.Repeat("k", 4097): false,
	} {
		if err := ValidKey(key); (err == nil) != ok {
			t.Errorf("ValidKey(%q) = %v, want ok=%v", key, err, ok)
		}
	}
}
