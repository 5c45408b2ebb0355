package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLimitFlags: --max-message-size and --model-idle-timeout, their
// variables and defaults (64 MiB, 120 s), and bad values refused.
func TestLimitFlags(t *testing.T) {
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	c, err := parseConfig(nil, env(nil), io.Discard)
	if err != nil || c.MaxMessageBytes != 64<<20 || c.ModelIdleTimeout != 120*time.Second {
		t.Fatalf("defaults: %d %v %v", c.MaxMessageBytes, c.ModelIdleTimeout, err)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		size int64
		idle time.Duration
	}{
		{[]string{"--max-message-size", "1MiB", "--model-idle-timeout", "5m"}, nil, 1 << 20, 5 * time.Minute},
		{[]string{"--max-message-size=2048"}, nil, 2048, 120 * time.Second},
		{nil, map[string]string{"DSH_MAX_MESSAGE_SIZE": "3G", "DSH_MODEL_IDLE_TIMEOUT": "30"}, 3 << 30, 30 * time.Second},
		{[]string{"--model-idle-timeout", "0"}, map[string]string{"DSH_MODEL_IDLE_TIMEOUT": "9s"}, 64 << 20, 0},
		{[]string{"--max-message-size", "512 KiB"}, nil, 512 << 10, 120 * time.Second},
	} {
		c, err := parseConfig(tc.args, env(tc.env), io.Discard)
		if err != nil || c.MaxMessageBytes != tc.size || c.ModelIdleTimeout != tc.idle {
			t.Errorf("%q %v: %d %v %v, want %d %v", tc.args, tc.env, c.MaxMessageBytes, c.ModelIdleTimeout, err, tc.size, tc.idle)
		}
	}
	for _, args := range [][]string{
		{"--max-message-size", "12"}, {"--max-message-size", "lots"}, {"--max-message-size", "5TB"},
		{"--model-idle-timeout", "-1s"}, {"--model-idle-timeout", "soon"},
	} {
		if _, err := parseConfig(args, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "")) {
			t.Errorf("%q: %v, want an error naming the flag", args, err)
		}
	}
}

// TestMCPWaitFlag: --mcp-wait and DSH_MCP_WAIT (default 2 s, 0 allowed,
// the flag winning), bad values refused naming the flag.
func TestMCPWaitFlag(t *testing.T) {
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want time.Duration
	}{
		{nil, nil, 2 * time.Second},
		{[]string{"--mcp-wait", "30s"}, nil, 30 * time.Second},
		{nil, map[string]string{"DSH_MCP_WAIT": "0"}, 0},
		{[]string{"--mcp-wait=500ms"}, map[string]string{"DSH_MCP_WAIT": "9s"}, 500 * time.Millisecond},
	} {
		c, err := parseConfig(tc.args, env(tc.env), io.Discard)
		if err != nil || c.MCPWait != tc.want {
			t.Errorf("%q %v: %v %v, want %v", tc.args, tc.env, c.MCPWait, err, tc.want)
		}
	}
	for _, v := range []string{"-1s", "later"} {
		if _, err := parseConfig([]string{"--mcp-wait", v}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--mcp-wait") {
			t.Errorf("--mcp-wait %s: %v", v, err)
		}
	}
}

// TestModelImagesFlag: --model-images and DSH_MODEL_IMAGES (the flag
// wins), none by default, and bad lists refused naming the flag.
func TestModelImagesFlag(t *testing.T) {
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, ""},
		{[]string{"--model-images", "gpt-4o, qwen-vl"}, nil, "gpt-4o,qwen-vl"},
		{nil, map[string]string{"DSH_MODEL_IMAGES": "*"}, "*"},
		{[]string{"--model-images="}, map[string]string{"DSH_MODEL_IMAGES": "*"}, ""},
	} {
		c, err := parseConfig(tc.args, env(tc.env), io.Discard)
		if err != nil || c.ImageModels.String() != tc.want {
			t.Errorf("%q %v: %q %v, want %q", tc.args, tc.env, c.ImageModels.String(), err, tc.want)
		}
	}
	c, _ := parseConfig(nil, env(nil), io.Discard)
	if c.ImageModels.Accepts(c.Model) {
		t.Errorf("the default model %s takes images by default", c.Model)
	}
	for _, v := range []string{"a,,b", "*,gpt-4o"} {
		if _, err := parseConfig([]string{"--model-images", v}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--model-images") {
			t.Errorf("%q: %v, want an error naming the flag", v, err)
		}
	}
}

// TestTitleAndCompactionFlags: titles are on by default and never with
// --replay or --record; --compact-threshold is a percentage (80 by
// default, 0 off); the user's command folder follows XDG_CONFIG_HOME.
func TestTitleAndCompactionFlags(t *testing.T) {
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	rec := t.TempDir()
	for _, tc := range []struct {
		args    []string
		env     map[string]string
		titles  bool
		compact float64
	}{
		{nil, nil, true, 0.8},
		{[]string{"--titles", "off"}, nil, false, 0.8},
		{nil, map[string]string{"DSH_TITLES": "off", "DSH_COMPACT_THRESHOLD": "0"}, false, 0},
		{[]string{"--replay", rec}, nil, false, 0.8},
		{[]string{"--record", rec, "--titles", "on", "--compact-threshold", "95%"}, nil, false, 0.95},
		{[]string{"--compact-threshold", "100"}, map[string]string{"DSH_TITLES": "off"}, false, 1},
		{[]string{"--titles=on"}, map[string]string{"DSH_TITLES": "off"}, true, 0.8},
	} {
		c, err := parseConfig(tc.args, env(tc.env), io.Discard)
		if err != nil || c.Titles != tc.titles || c.CompactAt != tc.compact {
			t.Errorf("%q %v: titles %v compact %v (%v), want %v %v", tc.args, tc.env, c.Titles, c.CompactAt, err, tc.titles, tc.compact)
		}
	}
	for _, args := range [][]string{{"--titles", "yes"}, {"--compact-threshold", "101"}, {"--compact-threshold", "-5"}, {"--compact-threshold", "most"}} {
		if _, err := parseConfig(args, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%q: %v, want an error naming the flag", args, err)
		}
	}
	c, _ := parseConfig(nil, env(map[string]string{"XDG_CONFIG_HOME": "/cfg"}), io.Discard)
	if c.CommandsDir != "/cfg/dsh-acp/commands" {
		t.Errorf("CommandsDir %q", c.CommandsDir)
	}
}

// TestTrustAndAllowReadFlags: --mcp-trusted and --sandbox-allow-read
// (and their variables, the flag winning) give comma-separated lists,
// "~/" expanded for paths.
func TestTrustAndAllowReadFlags(t *testing.T) {
	home, _ := os.UserHomeDir()
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	c, err := parseConfig(nil, env(map[string]string{"DSH_MCP_TRUSTED": "notes, fs", "DSH_SANDBOX_ALLOW_READ": "~/.ssh"}), io.Discard)
	if err != nil || !slices.Equal(c.MCPTrusted, []string{"notes", "fs"}) || !slices.Equal(c.SandboxAllowRead, []string{filepath.Join(home, ".ssh")}) {
		t.Errorf("from the environment: %q %q %v", c.MCPTrusted, c.SandboxAllowRead, err)
	}
	c, err = parseConfig([]string{"--mcp-trusted", "one", "--sandbox-allow-read", "/x/.aws,~/.netrc"}, env(map[string]string{"DSH_MCP_TRUSTED": "notes"}), io.Discard)
	if err != nil || !slices.Equal(c.MCPTrusted, []string{"one"}) || !slices.Equal(c.SandboxAllowRead, []string{"/x/.aws", filepath.Join(home, ".netrc")}) {
		t.Errorf("from the flags: %q %q %v", c.MCPTrusted, c.SandboxAllowRead, err)
	}
}
