//go:build linux

package toolbash

import (
	"bytes"
	"os"
	"strconv"
)

// groupRunning reports whether process group pgid has a member that is not
// a zombie (a killed leftover stays a zombie until its new parent, often
// init, reaps it), from /proc/<pid>/stat. It answers true when /proc
// cannot be listed.
func groupRunning(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	names, err := d.Readdirnames(-1)
	_ = d.Close()
	if err != nil {
		return true
	}
	want := []byte(strconv.Itoa(pgid))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) > 2 && bytes.Equal(f[2], want) && !bytes.Equal(f[0], []byte("Z")) {
			return true
		}
	}
	return false
}
