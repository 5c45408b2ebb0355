package main

import (
	"io"
	"strings"
	"testing"
)

// TestSubagentDepthFlag: --subagent-depth and DSH_SUBAGENT_DEPTH
// (default 1, the flag winning), and values below 1 refused naming the
// flag.
func TestSubagentDepthFlag(t *testing.T) {
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want int
	}{
		{nil, nil, 1},
		{[]string{"--subagent-depth", "3"}, nil, 3},
		{nil, map[string]string{"DSH_SUBAGENT_DEPTH": "2"}, 2},
		{[]string{"--subagent-depth=1"}, map[string]string{"DSH_SUBAGENT_DEPTH": "4"}, 1},
	} {
		c, err := parseConfig(tc.args, env(tc.env), io.Discard)
		if err != nil || c.SubagentDepth != tc.want {
			t.Errorf("%q %v: %d %v, want %d", tc.args, tc.env, c.SubagentDepth, err, tc.want)
		}
	}
	for _, v := range []string{"0", "-1", "deep"} {
		if _, err := parseConfig([]string{"--subagent-depth", v}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--subagent-depth") {
			t.Errorf("%q: %v, want an error naming the flag", v, err)
		}
	}
}
