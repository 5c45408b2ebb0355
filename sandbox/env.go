package sandbox

import "strings"

// SecretName reports whether an environment variable's name looks like
// it holds a credential (it contains KEY, SECRET or TOKEN, in any
// case): such variables are left out of every command's environment.
func SecretName(name string) bool {
	up := strings.ToUpper(name)
	return strings.Contains(up, "KEY") || strings.Contains(up, "SECRET") || strings.Contains(up, "TOKEN")
}

// CommandEnv is the environment of a command the agent starts: environ
// (KEY=value entries) without the variables SecretName flags, those drop
// reports (nil: none more) and those set names, followed by set (entries
// that replace any value the agent has). Every command's environment,
// the model's and the agent's own, is made here.
func CommandEnv(environ []string, drop func(name string) bool, set ...string) []string {
	forced := make(map[string]bool, len(set))
	for _, kv := range set {
		n, _, _ := strings.Cut(kv, "=")
		forced[n] = true
	}
	out := make([]string, 0, len(environ)+len(set))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if SecretName(name) || forced[name] || drop != nil && drop(name) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, set...)
}
