package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/help.golden")

// noEnv is an empty environment.
func noEnv(string) (string, bool) { return "", false }

// TestHelpGolden: --help with no variables set is testdata/help.golden
// (go test ./cmd/dsh-acp -run TestHelpGolden -update rewrites it).
func TestHelpGolden(t *testing.T) {
	var buf bytes.Buffer
	printUsage(&buf, noEnv)
	golden := filepath.Join("testdata", "help.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("--help differs from %s (rerun with -update and review the diff):\n%s", golden, buf.Bytes())
	}
}

// TestFlagTable: every flag has a group in flagTable (a new flag must be
// added there, else --help lists it under "Other"), and every flag but
// --version shows its environment variable on its line; the value names
// of the numeric flags are their types.
func TestFlagTable(t *testing.T) {
	fs := flag.NewFlagSet("dsh-acp", flag.ContinueOnError)
	defineFlags(fs, &config{}, envGetter(noEnv))
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := flagTable[f.Name]; !ok {
			t.Errorf("flag --%s has no group in flagTable (usage.go)", f.Name)
		}
		if env, _ := envOf(f.Usage); env == "" && f.Name != "version" {
			t.Errorf("flag --%s: its text names no environment variable as (env DSH_...) or (...; env DSH_...)", f.Name)
		}
	})
	var buf bytes.Buffer
	printFlags(&buf, fs)
	for _, want := range []string{"\n  --max-steps int ", "\n  --model-idle-timeout duration ", "\n  --mcp-wait duration ",
		"\n  --context-window int ", "\n  --max-message-size size ", "\n  --version\n", "env DSH_MAX_STEPS\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the flags' help lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "\n"+groupOther+":") {
		t.Errorf("some flags are listed under %s:\n%s", groupOther, buf.String())
	}
	for _, l := range strings.Split(buf.String(), "\n") {
		if len(l) > 80 {
			t.Errorf("a help line is longer than 80 columns: %q", l)
		}
	}
}

// TestSingleDashFlags: the flag package's one-dash forms keep working
// beside the two-dash ones the help shows.
func TestSingleDashFlags(t *testing.T) {
	c, err := parseConfig([]string{"-max-steps", "3", "-mode=plan", "--log-level", "debug", "-sandbox", "off"}, noEnv, io.Discard)
	if err != nil || c.MaxSteps != 3 || c.Mode != "plan" || c.LogLevel.String() != "DEBUG" || c.Sandbox.Mode != "off" {
		t.Errorf("one-dash flags: %+v %v", c, err)
	}
	if c, err := parseConfig(nil, noEnv, io.Discard); err != nil || c.LogLevel.String() != "WARN" {
		t.Errorf("the default log level is %v (%v), want warn", c.LogLevel, err)
	}
}
