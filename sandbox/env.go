package sandbox

import "strings"

// SecretName reports whether an environment variable's name looks like
// it holds a credential (it contains KEY, SECRET or TOKEN, in any
// case): such variables are left out of every command's environment.
func SecretName(name string) bool {
	up := strings.ToUpper(name)
	return strings.Contains(up, "KEY") || strings.Contains(up, "SECRET") || strings.Contains(up, "TOKEN")
}
