package main

import (
	"io"
	"strings"
	"testing"
)

// TestPromptQueueFlag: --prompt-queue (or DSH_PROMPT_QUEUE) is a
// positive count, 8 by default; the flag wins over the variable.
func TestPromptQueueFlag(t *testing.T) {
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want int
	}{
		{nil, nil, 8},
		{[]string{"--prompt-queue", "3"}, nil, 3},
		{nil, map[string]string{"DSH_PROMPT_QUEUE": "20"}, 20},
		{[]string{"--prompt-queue=1"}, map[string]string{"DSH_PROMPT_QUEUE": "20"}, 1},
	} {
		c, err := parseConfig(tc.args, env(tc.env), io.Discard)
		if err != nil || c.PromptQueue != tc.want {
			t.Errorf("%q %v: %d (%v), want %d", tc.args, tc.env, c.PromptQueue, err, tc.want)
		}
	}
	for _, v := range []string{"0", "-1", "many"} {
		if _, err := parseConfig([]string{"--prompt-queue", v}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--prompt-queue") {
			t.Errorf("--prompt-queue %s: %v, want an error naming the flag", v, err)
		}
	}
}
