package main

import (
	"io"
	"strings"
	"testing"
)

// envFrom is a lookup of the variables in kv, as parseConfig takes the
// environment (nil: none set).
func envFrom(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

// flagCase is one parse of the arguments args with the variables env,
// and the value the flag's field must then hold.
type flagCase[T comparable] struct {
	args []string
	env  map[string]string
	want T
}

// checkFlag parses each case and checks the value get reads from the
// config, then checks that flag given each of bad is refused with an
// error naming flag.
func checkFlag[T comparable](t *testing.T, flag string, get func(config) T, cases []flagCase[T], bad ...string) {
	t.Helper()
	for _, tc := range cases {
		c, err := parseConfig(tc.args, envFrom(tc.env), io.Discard)
		if got := get(c); err != nil || got != tc.want {
			t.Errorf("%q %v: %v (%v), want %v", tc.args, tc.env, got, err, tc.want)
		}
	}
	for _, v := range bad {
		if _, err := parseConfig([]string{flag, v}, envFrom(nil), io.Discard); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s %q: %v, want an error naming the flag", flag, v, err)
		}
	}
}
