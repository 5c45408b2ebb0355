// Package credentials finds the API key the agent sends to the model
// endpoint, in this order: the DSH_API_KEY variable, then
// DEEPSEEK_API_KEY, then the credentials file that `dsh-acp login` writes
// ($XDG_CONFIG_HOME/dsh-acp/credentials, else ~/.config/dsh-acp/credentials).
//
// The file is JSON, readable by its owner only (mode 0600, in a 0700
// directory), and keeps one key per endpoint:
//
//	{"endpoints": {"https://api.deepseek.com": {"api_key": "sk-..."}}}
//
// A key is only sent to the endpoint it was checked against at login: a
// key stored for DeepSeek is not offered to another --base-url. The file
// is read every time a key is needed, so a login done while the agent
// runs takes effect at the next prompt. Errors about the file name the
// file and what is wrong with it, never its content.
package credentials

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// The environment variables that hold a key, in the order they are read.
const (
	EnvKey         = "DSH_API_KEY"
	EnvDeepSeekKey = "DEEPSEEK_API_KEY"
)

// maxFileSize bounds, in bytes, the credentials file read: a larger file
// is not one `login` wrote.
const maxFileSize = 1 << 20

// ErrNoKey is returned by Source.Key when neither variable is set and the
// credentials file holds no key for the endpoint. Its text is the
// sentence the editor shows with the auth_required error.
//
//lint:ignore ST1005 the sentence is shown to the user as it is, capitalized and ended.
var ErrNoKey = errors.New("No API key for the model endpoint: run `dsh-acp login` in a terminal to store one, or set DSH_API_KEY (or DEEPSEEK_API_KEY) in the agent's environment.")

// FileError is a credentials file that cannot be used: unreadable, open
// to other users, or not what `login` writes. Problem says which, without
// any of the file's content.
type FileError struct {
	Path    string
	Problem string
	Err     error // the underlying error, if any
}

func (e *FileError) Error() string {
	return fmt.Sprintf("The credentials file %s %s: run `dsh-acp login` to replace it, or set DSH_API_KEY (or DEEPSEEK_API_KEY).", e.Path, e.Problem)
}

// Unwrap returns the underlying error (nil if none).
func (e *FileError) Unwrap() error { return e.Err }

// DefaultPath is the credentials file's path for the environment getenv
// reads: $XDG_CONFIG_HOME/dsh-acp/credentials when XDG_CONFIG_HOME is an
// absolute path, else the user config directory (%AppData% on Windows,
// ~/.config elsewhere) joined with dsh-acp/credentials. It fails when
// neither XDG_CONFIG_HOME nor the home directory is known.
func DefaultPath(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "dsh-acp", "credentials"), nil
	}
	if runtime.GOOS == "windows" {
		if d := getenv("AppData"); d != "" {
			return filepath.Join(d, "dsh-acp", "credentials"), nil
		}
	}
	home := getenv("HOME")
	if home == "" && runtime.GOOS == "windows" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		return "", errors.New("cannot place the credentials file: neither XDG_CONFIG_HOME nor HOME is set")
	}
	return filepath.Join(home, ".config", "dsh-acp", "credentials"), nil
}

// Endpoint is the form endpoints are stored under: the base URL without
// trailing slashes.
func Endpoint(baseURL string) string { return strings.TrimRight(baseURL, "/") }

// file is the credentials file's JSON.
type file struct {
	Endpoints map[string]entry `json:"endpoints"`
}

type entry struct {
	APIKey string `json:"api_key"`
}

// Store is the credentials file at Path. Its methods are safe to call
// from several goroutines; two processes saving at once each write a
// whole file (the last rename wins).
type Store struct {
	Path string
}

// Load returns the key stored for baseURL, or "" when the file does not
// exist or has no key for it. A file that exists but cannot be used is a
// *FileError.
func (s Store) Load(baseURL string) (string, error) {
	f, err := s.read()
	if err != nil || f == nil {
		return "", err
	}
	return f.Endpoints[Endpoint(baseURL)].APIKey, nil
}

// read returns the parsed file, nil when it does not exist (or Path is
// "": no place for one).
func (s Store) read() (*file, error) {
	if s.Path == "" {
		return nil, nil
	}
	// Not opened unless it is a regular file: opening a named pipe would
	// wait for a writer.
	if st, err := os.Stat(s.Path); err == nil && !st.Mode().IsRegular() {
		return nil, &FileError{Path: s.Path, Problem: "is not a regular file"}
	}
	fh, err := os.Open(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &FileError{Path: s.Path, Problem: "cannot be opened (" + errText(err) + ")", Err: err}
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, &FileError{Path: s.Path, Problem: "cannot be read (" + errText(err) + ")", Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, &FileError{Path: s.Path, Problem: "is not a regular file"}
	}
	if err := checkMode(st); err != nil {
		return nil, &FileError{Path: s.Path, Problem: err.Error()}
	}
	if st.Size() > maxFileSize {
		return nil, &FileError{Path: s.Path, Problem: fmt.Sprintf("is %d bytes, larger than a credentials file can be", st.Size())}
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxFileSize+1))
	if err != nil {
		return nil, &FileError{Path: s.Path, Problem: "cannot be read (" + errText(err) + ")", Err: err}
	}
	if len(b) > maxFileSize {
		return nil, &FileError{Path: s.Path, Problem: "is larger than a credentials file can be"}
	}
	return parse(s.Path, b)
}

// parse checks the file's shape. Its errors give positions, never bytes
// of the content (a stray key must not reach a log).
func parse(path string, b []byte) (*file, error) {
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		problem := "is not valid JSON"
		var se *json.SyntaxError
		if errors.As(err, &se) {
			problem = fmt.Sprintf("is not valid JSON (at byte %d)", se.Offset)
		} else {
			problem = "is not a dsh-acp credentials file (expected {\"endpoints\": {URL: {\"api_key\": ...}}})"
		}
		return nil, &FileError{Path: path, Problem: problem}
	}
	if f.Endpoints == nil {
		return nil, &FileError{Path: path, Problem: "is not a dsh-acp credentials file (no \"endpoints\" object)"}
	}
	for url, e := range f.Endpoints {
		if err := ValidKey(e.APIKey); err != nil {
			return nil, &FileError{Path: path, Problem: fmt.Sprintf("holds an unusable key for %s (%v)", url, err)}
		}
	}
	return &f, nil
}

// ValidKey reports whether key can be sent in an Authorization header:
// non-empty, at most 4096 bytes, printable ASCII without spaces. The
// error never quotes the key.
func ValidKey(key string) error {
	if key == "" {
		return errors.New("the key is empty")
	}
	if len(key) > 4096 {
		return fmt.Errorf("the key is %d bytes long", len(key))
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("the key has a space, control or non-ASCII character at byte %d", i+1)
		}
	}
	return nil
}

// Save stores key for baseURL, keeping the keys of other endpoints when
// the file is valid; an unusable file is replaced. The directory is
// created with mode 0700 and the file written with mode 0600 through a
// temporary file and a rename, so a reader never sees half a file.
func (s Store) Save(baseURL, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	f, err := s.read()
	if err != nil || f == nil {
		f = &file{Endpoints: map[string]entry{}}
	}
	f.Endpoints[Endpoint(baseURL)] = entry{APIKey: key}
	return s.write(f)
}

// Remove deletes the key stored for baseURL, and the file when no key is
// left in it. It reports whether there was a key to remove. An unusable
// file is removed whole (it cannot hold a key this agent would use).
func (s Store) Remove(baseURL string) (bool, error) {
	f, err := s.read()
	var fe *FileError
	if errors.As(err, &fe) {
		if err := os.Remove(s.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("removing the credentials file %s: %w", s.Path, err)
		}
		return true, nil
	}
	if err != nil || f == nil {
		return false, err
	}
	ep := Endpoint(baseURL)
	if _, ok := f.Endpoints[ep]; !ok {
		return false, nil
	}
	delete(f.Endpoints, ep)
	if len(f.Endpoints) == 0 {
		if err := os.Remove(s.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("removing the credentials file %s: %w", s.Path, err)
		}
		return true, nil
	}
	return true, s.write(f)
}

// write replaces the file with f.
func (s Store) write(f *file) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".credentials-*")
	if err != nil {
		return fmt.Errorf("writing the credentials file in %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; Chmod states it.
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return fmt.Errorf("writing the credentials file %s: %w", s.Path, err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the credentials file %s: %w", s.Path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the credentials file %s: %w", s.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the credentials file %s: %w", s.Path, err)
	}
	if err := os.Rename(tmp.Name(), s.Path); err != nil {
		return fmt.Errorf("writing the credentials file %s: %w", s.Path, err)
	}
	return nil
}

// Source resolves the key for one endpoint: Env's DSH_API_KEY, then its
// DEEPSEEK_API_KEY, then Store's key for BaseURL.
type Source struct {
	// Env looks a variable up (os.LookupEnv); nil reads no variable.
	Env     func(string) (string, bool)
	Store   Store
	BaseURL string
}

// Origin names where a key came from: a variable's name or the file's
// path.
type Origin string

// Key returns the key and its origin. An empty or unset variable is
// skipped. Without any key it returns ErrNoKey; a credentials file that
// cannot be used is a *FileError (the variables, when set, win and the
// file is not read).
func (s Source) Key() (string, Origin, error) {
	for _, name := range []string{EnvKey, EnvDeepSeekKey} {
		if s.Env == nil {
			break
		}
		if v, ok := s.Env(name); ok && v != "" {
			return v, Origin(name), nil
		}
	}
	key, err := s.Store.Load(s.BaseURL)
	if err != nil {
		return "", "", err
	}
	if key == "" {
		return "", "", ErrNoKey
	}
	return key, Origin(s.Store.Path), nil
}

// APIKey is Key without the origin, the shape llm.HTTP.KeyFunc takes.
func (s Source) APIKey() (string, error) {
	k, _, err := s.Key()
	return k, err
}

// Check returns nil when Key would find a key, else Key's error.
func (s Source) Check() error {
	_, _, err := s.Key()
	return err
}

// EnvOrigin returns the variable that holds a key, or "" when neither
// does (logout uses it to say a key is still in force).
func (s Source) EnvOrigin() string {
	if s.Env == nil {
		return ""
	}
	for _, name := range []string{EnvKey, EnvDeepSeekKey} {
		if v, ok := s.Env(name); ok && v != "" {
			return name
		}
	}
	return ""
}

// errText is an OS error's text without the path it repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
