package main

import "testing"

// TestPromptQueueFlag: --prompt-queue (or DSH_PROMPT_QUEUE) is a
// positive count, 8 by default; the flag wins over the variable.
func TestPromptQueueFlag(t *testing.T) {
	checkFlag(t, "--prompt-queue", func(c config) int { return c.PromptQueue }, []flagCase[int]{
		{nil, nil, 8},
		{[]string{"--prompt-queue", "3"}, nil, 3},
		{nil, map[string]string{"DSH_PROMPT_QUEUE": "20"}, 20},
		{[]string{"--prompt-queue=1"}, map[string]string{"DSH_PROMPT_QUEUE": "20"}, 1},
	}, "0", "-1", "many")
}
