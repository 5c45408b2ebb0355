package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-acp/dsh-acp/llm"
)

// TestLimitFlags: --max-message-size and --model-idle-timeout, their
// variables and defaults (64 MiB, 120 s), and bad values refused.
func TestLimitFlags(t *testing.T) {
	c, err := parseConfig(nil, envFrom(nil), io.Discard)
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
		c, err := parseConfig(tc.args, envFrom(tc.env), io.Discard)
		if err != nil || c.MaxMessageBytes != tc.size || c.ModelIdleTimeout != tc.idle {
			t.Errorf("%q %v: %d %v %v, want %d %v", tc.args, tc.env, c.MaxMessageBytes, c.ModelIdleTimeout, err, tc.size, tc.idle)
		}
	}
	for _, args := range [][]string{
		{"--max-message-size", "12"}, {"--max-message-size", "lots"}, {"--max-message-size", "5TB"},
		{"--model-idle-timeout", "-1s"}, {"--model-idle-timeout", "soon"},
	} {
		if _, err := parseConfig(args, envFrom(nil), io.Discard); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "")) {
			t.Errorf("%q: %v, want an error naming the flag", args, err)
		}
	}
}

// TestMCPWaitFlag: --mcp-wait and DSH_MCP_WAIT (default 2 s, 0 allowed,
// the flag winning), bad values refused naming the flag.
func TestMCPWaitFlag(t *testing.T) {
	checkFlag(t, "--mcp-wait", func(c config) time.Duration { return c.MCPWait }, []flagCase[time.Duration]{
		{nil, nil, 2 * time.Second},
		{[]string{"--mcp-wait", "30s"}, nil, 30 * time.Second},
		{nil, map[string]string{"DSH_MCP_WAIT": "0"}, 0},
		{[]string{"--mcp-wait=500ms"}, map[string]string{"DSH_MCP_WAIT": "9s"}, 500 * time.Millisecond},
	}, "-1s", "later")
}

// TestModelImagesFlag: --model-images and DSH_MODEL_IMAGES (the flag
// wins), none by default, and bad lists refused naming the flag.
func TestModelImagesFlag(t *testing.T) {
	checkFlag(t, "--model-images", func(c config) string { return c.ImageModels.String() }, []flagCase[string]{
		{nil, nil, ""},
		{[]string{"--model-images", "gpt-4o, qwen-vl"}, nil, "gpt-4o,qwen-vl"},
		{nil, map[string]string{"DSH_MODEL_IMAGES": "*"}, "*"},
		{[]string{"--model-images="}, map[string]string{"DSH_MODEL_IMAGES": "*"}, ""},
	}, "a,,b", "*,gpt-4o")
	c, _ := parseConfig(nil, envFrom(nil), io.Discard)
	if c.ImageModels.Accepts(c.Model) {
		t.Errorf("the default model %s takes images by default", c.Model)
	}
}

// TestTitleAndCompactionFlags: titles are on by default and never with
// --replay or --record; --compact-threshold is a percentage (80 by
// default, 0 off); the user's command folder follows XDG_CONFIG_HOME.
func TestTitleAndCompactionFlags(t *testing.T) {
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
		c, err := parseConfig(tc.args, envFrom(tc.env), io.Discard)
		if err != nil || c.Titles != tc.titles || c.CompactAt != tc.compact {
			t.Errorf("%q %v: titles %v compact %v (%v), want %v %v", tc.args, tc.env, c.Titles, c.CompactAt, err, tc.titles, tc.compact)
		}
	}
	for _, args := range [][]string{{"--titles", "yes"}, {"--compact-threshold", "101"}, {"--compact-threshold", "-5"}, {"--compact-threshold", "most"}} {
		if _, err := parseConfig(args, envFrom(nil), io.Discard); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%q: %v, want an error naming the flag", args, err)
		}
	}
	c, _ := parseConfig(nil, envFrom(map[string]string{"XDG_CONFIG_HOME": "/cfg"}), io.Discard)
	if c.CommandsDir != "/cfg/dsh-acp/commands" {
		t.Errorf("CommandsDir %q", c.CommandsDir)
	}
}

// TestProviderFlag: --provider and DSH_PROVIDER (the flag winning), the
// default by the base URL's host, DeepSeek's catalog following the
// provider (a local stand-in gets it with --provider deepseek), and a
// bad value refused naming the flag; the default model is
// deepseek-flash.
func TestProviderFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want llm.Provider
	}{
		{nil, nil, llm.ProviderDeepSeek},
		{[]string{"--base-url", "http://127.0.0.1:9"}, nil, llm.ProviderOpenAI},
		{[]string{"--base-url", "http://127.0.0.1:9", "--provider", "deepseek"}, nil, llm.ProviderDeepSeek},
		{[]string{"--base-url", "http://127.0.0.1:9"}, map[string]string{"DSH_PROVIDER": "DeepSeek"}, llm.ProviderDeepSeek},
		{[]string{"--provider", "openai"}, map[string]string{"DSH_PROVIDER": "deepseek"}, llm.ProviderOpenAI},
	} {
		c, err := parseConfig(tc.args, envFrom(tc.env), io.Discard)
		if err != nil || c.Provider != tc.want {
			t.Errorf("%q %v: provider %q, %v; want %q", tc.args, tc.env, c.Provider, err, tc.want)
			continue
		}
		if _, priced := c.Catalog.Lookup("deepseek-flash"); priced != tc.want.DeepSeek() {
			t.Errorf("%q %v: DeepSeek's catalog %v with provider %q", tc.args, tc.env, priced, c.Provider)
		}
		if c.Model != "deepseek-flash" {
			t.Errorf("default model %q", c.Model)
		}
	}
	if _, err := parseConfig([]string{"--provider", "anthropic"}, envFrom(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--provider") || !strings.Contains(err.Error(), "anthropic") {
		t.Errorf("a bad provider: %v", err)
	}
}

// TestLowBalanceFlag: amounts with currencies, off, and bad values.
func TestLowBalanceFlag(t *testing.T) {
	for v, want := range map[string]map[string]float64{
		"1 USD, 5 CNY": {"USD": 1, "CNY": 5}, "2.5usd": {"USD": 2.5}, "off": nil, "0": nil,
	} {
		got, err := parseLowBalance(v)
		if err != nil || len(got) != len(want) {
			t.Errorf("%q: %v, %v", v, got, err)
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%q: %s = %v, want %v", v, k, got[k], n)
			}
		}
	}
	for _, v := range []string{"USD", "1 dollars", "-1 USD", "1 USD,"} {
		if _, err := parseLowBalance(v); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
	c, err := parseConfig(nil, func(string) (string, bool) { return "", false }, io.Discard)
	if err != nil || c.LowBalance["USD"] != 1 || c.LowBalance["CNY"] != 5 {
		t.Errorf("default low balance %v, %v", c.LowBalance, err)
	}
}

// TestSpillFlag: --max-spill-size and DSH_MAX_SPILL_SIZE (default 64 MiB,
// 0 for no limit, the flag winning), bad values refused naming the flag.
func TestSpillFlag(t *testing.T) {
	checkFlag(t, "--max-spill-size", func(c config) int64 { return c.SpillMax }, []flagCase[int64]{
		{nil, nil, 64 << 20},
		{[]string{"--max-spill-size", "1GiB"}, map[string]string{"DSH_MAX_SPILL_SIZE": "5M"}, 1 << 30},
		{nil, map[string]string{"DSH_MAX_SPILL_SIZE": "5M"}, 5 << 20},
		{[]string{"--max-spill-size=0"}, nil, -1},
	}, "-5", "lots", "5TB")
}

// TestTrustAndAllowReadFlags: --mcp-trusted and --sandbox-allow-read
// (and their variables, the flag winning) give comma-separated lists,
// "~/" expanded for paths.
func TestTrustAndAllowReadFlags(t *testing.T) {
	home, _ := os.UserHomeDir()
	c, err := parseConfig(nil, envFrom(map[string]string{"DSH_MCP_TRUSTED": "notes, fs", "DSH_SANDBOX_ALLOW_READ": "~/.ssh"}), io.Discard)
	if err != nil || !slices.Equal(c.MCPTrusted, []string{"notes", "fs"}) || !slices.Equal(c.SandboxAllowRead, []string{filepath.Join(home, ".ssh")}) {
		t.Errorf("from the environment: %q %q %v", c.MCPTrusted, c.SandboxAllowRead, err)
	}
	c, err = parseConfig([]string{"--mcp-trusted", "one", "--sandbox-allow-read", "/x/.aws,~/.netrc"}, envFrom(map[string]string{"DSH_MCP_TRUSTED": "notes"}), io.Discard)
	if err != nil || !slices.Equal(c.MCPTrusted, []string{"one"}) || !slices.Equal(c.SandboxAllowRead, []string{"/x/.aws", filepath.Join(home, ".netrc")}) {
		t.Errorf("from the flags: %q %q %v", c.MCPTrusted, c.SandboxAllowRead, err)
	}
}
