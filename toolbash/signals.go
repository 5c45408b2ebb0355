package toolbash

import (
	"strconv"
	"syscall"
)

// signalName returns a signal's name ("SIGTERM"); an unknown one is "SIG"
// followed by its number.
func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return "SIG" + strconv.Itoa(int(s))
}

const (
	sigTERM = syscall.SIGTERM
	sigKILL = syscall.SIGKILL
)
