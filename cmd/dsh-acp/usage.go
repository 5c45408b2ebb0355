package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
)

// flagHelp is how --help shows one flag: the group it is listed under
// and the name of its value ("" for a boolean flag, or to take the
// flag package's own name of the flag's type).
type flagHelp struct {
	group, arg string
}

// The groups of --help, in the order they are printed. groupOther
// collects the flags flagTable does not know (a test fails on any).
const (
	groupModel   = "Model"
	groupSession = "Session"
	groupSandbox = "Sandbox"
	groupLimits  = "Limits"
	groupLogging = "Logging and diagnostics"
	groupOther   = "Other"
)

var groupOrder = []string{groupModel, groupSession, groupSandbox, groupLimits, groupLogging, groupOther}

// flagTable gives each flag's group and value name. The value names are
// the types the flags' text is parsed as (int, duration, size, ...):
// several flags are defined as strings so that their environment
// variable is checked with the same message as the flag. A flag may be
// listed before it is defined; only defined flags are printed.
var flagTable = map[string]flagHelp{
	"base-url":          {groupModel, "URL"},
	"model":             {groupModel, "NAME"},
	"provider":          {groupModel, "deepseek|openai"},
	"thinking":          {groupModel, "LEVEL"},
	"context-window":    {groupModel, "int"},
	"prices":            {groupModel, "FILE"},
	"model-images":      {groupModel, "LIST"},
	"web-search-url":    {groupModel, "URL"},
	"web-fetch-url":     {groupModel, "URL"},
	"web-allow-private": {groupModel, "0|1"},
	"replay":            {groupModel, "DIR"},
	"record":            {groupModel, "DIR"},
	"low-balance":       {groupModel, "AMOUNTS"},

	"mode":               {groupSession, "MODE"},
	"titles":             {groupSession, "on|off"},
	"compact-threshold":  {groupSession, "percent"},
	"mcp-wait":           {groupSession, "duration"},
	"mcp-trusted":        {groupSession, "NAMES"},
	"prompt-queue":       {groupSession, "int"},
	"subagent-depth":     {groupSession, "int"},
	"location-line-base": {groupSession, "0|1"},

	"sandbox":            {groupSandbox, "MODE"},
	"sandbox-network":    {groupSandbox, "allow|deny"},
	"sandbox-allow-read": {groupSandbox, "PATHS"},

	"max-steps":          {groupLimits, "int"},
	"max-message-size":   {groupLimits, "size"},
	"max-spill-size":     {groupLimits, "size"},
	"model-idle-timeout": {groupLimits, "duration"},

	"log-level": {groupLogging, "LEVEL"},
	"trace":     {groupLogging, "FILE"},
	"version":   {groupLogging, ""},
}

// helpOf is f's entry in flagTable, or the group groupOther with the
// flag package's name of its type when the table lacks it.
func helpOf(f *flag.Flag) flagHelp {
	if h, ok := flagTable[f.Name]; ok {
		return h
	}
	name, _ := flag.UnquoteUsage(f)
	return flagHelp{groupOther, name}
}

// printFlags writes fs's flags under their groups: each as `--name
// VALUE` with the environment variable its text names beside it, then
// the rest of its text wrapped to 80 columns and its default when it has
// one.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	byGroup := map[string][]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) { // in name order
		g := helpOf(f).group
		byGroup[g] = append(byGroup[g], f)
	})
	for _, g := range groupOrder {
		if len(byGroup[g]) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, f := range byGroup[g] {
			line := "  --" + f.Name
			if arg := helpOf(f).arg; arg != "" {
				line += " " + arg
			}
			_, text := flag.UnquoteUsage(f)
			if env, rest := envOf(text); env != "" {
				line = fmt.Sprintf("%-40s env %s", line, env)
				text = rest
			}
			fmt.Fprintln(w, line)
			if f.DefValue != "" && !isBoolFlag(f) {
				text += " (default " + f.DefValue + ")"
			}
			for _, l := range wrap(text, 80-8) {
				fmt.Fprintln(w, "        "+l)
			}
		}
	}
}

// isBoolFlag reports whether f takes no value (`--version`).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// wrap splits text at spaces into lines of at most width bytes (a word
// longer than width gets a line of its own).
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) > width:
			lines = append(lines, line)
			line = word
		default:
			line += " " + word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// envMention is how a flag's text names its environment variable: as
// the whole last parenthesis "(env DSH_X)" or as its last part
// "(...; env DSH_X)".
var envMention = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?: \(env ([A-Z][A-Z0-9_]*)\)|; env ([A-Z][A-Z0-9_]*)\))`)
})

// envOf finds the environment variable text names (envMention) and
// returns it and text without the mention; "" and text when it names
// none.
func envOf(text string) (env, rest string) {
	loc := envMention().FindStringSubmatchIndex(text)
	if loc == nil {
		return "", text
	}
	if loc[2] >= 0 {
		return text[loc[2]:loc[3]], text[:loc[0]] + text[loc[1]:]
	}
	return text[loc[4]:loc[5]], text[:loc[0]] + ")" + text[loc[1]:]
}
