package toolbash

// groupEnded reports whether p's command has ended: Windows has no
// process groups to ask, and Signal ends the whole tree.
func groupEnded(p *proc) bool { return p.sp.Reaped() }
