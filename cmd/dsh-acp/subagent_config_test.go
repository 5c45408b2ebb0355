package main

import "testing"

// TestSubagentDepthFlag: --subagent-depth and DSH_SUBAGENT_DEPTH
// (default 1, the flag winning), and values below 1 refused naming the
// flag.
func TestSubagentDepthFlag(t *testing.T) {
	checkFlag(t, "--subagent-depth", func(c config) int { return c.SubagentDepth }, []flagCase[int]{
		{nil, nil, 1},
		{[]string{"--subagent-depth", "3"}, nil, 3},
		{nil, map[string]string{"DSH_SUBAGENT_DEPTH": "2"}, 2},
		{[]string{"--subagent-depth=1"}, map[string]string{"DSH_SUBAGENT_DEPTH": "4"}, 1},
	}, "0", "-1", "deep")
}
