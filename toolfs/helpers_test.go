package toolfs

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-acp/dsh-acp/tools"
)

// env is a session with the three tools in a fresh directory.
type env struct {
	t    *testing.T
	dir  string
	sess tools.Session
	reg  *tools.Registry
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	reg := tools.NewRegistry()
	for _, tl := range Tools() {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return &env{t: t, dir: dir, sess: tools.NewSession("s1", dir), reg: reg}
}

// other returns a second session on the same directory and tools.
func (e *env) other() *env {
	return &env{t: e.t, dir: e.dir, sess: tools.NewSession("s2", e.dir), reg: e.reg}
}

// call runs a tool with arguments given as a Go value (marshalled) or a
// JSON string.
func (e *env) call(name string, args any) tools.Result {
	e.t.Helper()
	return e.callCtx(context.Background(), name, args)
}

func (e *env) callCtx(ctx context.Context, name string, args any) tools.Result {
	e.t.Helper()
	var raw []byte
	if s, ok := args.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		if raw, err = json.Marshal(args); err != nil {
			e.t.Fatal(err)
		}
	}
	return e.reg.Execute(ctx, &tools.Exec{CallID: "call_1", Name: name, Args: raw, Session: e.sess})
}

// ok runs a call that must succeed and returns its text.
func (e *env) ok(name string, args any) tools.Result {
	e.t.Helper()
	r := e.call(name, args)
	if r.IsError {
		e.t.Fatalf("%s %v: %s", name, args, text(r))
	}
	return r
}

// fail runs a call that must fail with code and message.
func (e *env) fail(name string, args any, code, msg string) {
	e.t.Helper()
	r := e.call(name, args)
	wantErr(e.t, r, code, msg)
}

func wantErr(t *testing.T, r tools.Result, code, msg string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("succeeded with %q, want error %s %q", text(r), code, msg)
	}
	if got := text(r); got != "Error: "+msg {
		t.Errorf("text = %q, want %q", got, "Error: "+msg)
	}
	if r.Error == nil || r.Error.Code != code {
		t.Errorf("error info = %+v, want code %s", r.Error, code)
	}
	if r.Error != nil && code != tools.CodeInvalidArgs && r.Error.Name != ErrorName {
		t.Errorf("error name = %q, want %q", r.Error.Name, ErrorName)
	}
	if r.Meta != nil {
		t.Errorf("an error result has meta %s", r.Meta)
	}
}

func text(r tools.Result) string { return tools.JoinText(r.Content) }

func (e *env) path(rel string) string { return filepath.Join(e.dir, rel) }

func (e *env) put(rel, content string) string {
	e.t.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) get(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.path(rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// meta decodes a result's Meta.
func meta(t *testing.T, r tools.Result) Meta {
	t.Helper()
	m, ok := parseMeta(r.Meta)
	if !ok {
		t.Fatalf("no usable meta: %s", r.Meta)
	}
	return m
}

// numbered returns n lines "line 1\n" … "line n\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line ")
		b.WriteString(itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func strp(s string) *string { return &s }

// asErr is errors.As.
func asErr(err error, target any) bool { return errors.As(err, target) }

// assertNoTemp fails when dir holds a temporary file of writeAtomic.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".dsh-tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
