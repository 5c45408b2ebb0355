package toolfs

import (
	"io/fs"
	"os"
	"time"

	"github.com/dsh-acp/dsh-acp/tools"
)

// editPlan is what an edit's preview computed at one look at the file:
// the file as loaded, the new content and the change's hunks. The
// call's Execute takes it (tools.Call.Kept) instead of reading and
// diffing again, when the file is still the one the preview read
// (unchanged).
type editPlan struct {
	target string
	exp    version // the observed version the plan was checked against
	cur    *current
	after  []byte
	meta   Meta
	// readAt is the time just before the preview read the file.
	readAt time.Time
}

// keepPlan gives the preview's plan to the call's Execute. Plans read
// through the editor are not kept: a buffer can change without the file
// on disk showing it.
func keepPlan(c *tools.Call, p *editPlan) {
	if c != nil && p.cur.editor == nil && p.cur.info != nil {
		c.Keep(p)
	}
}

// takePlan returns the plan the call's preview kept for f at version
// exp, when the file on disk is still the one it read; nil otherwise.
func takePlan(c *tools.Call, f file, exp version) *editPlan {
	if c == nil {
		return nil
	}
	p, _ := c.Kept().(*editPlan)
	if p == nil || p.target != f.target || p.exp != exp {
		return nil
	}
	info, err := statFile(f, "edit")
	if err != nil || info == nil || !unchanged(p.cur.info, info, p.readAt) {
		return nil
	}
	return p
}

// unchanged reports whether now, a new stat of the file that was read
// as before at readAt, is certainly the same content: the same file
// (device and inode), size, mode, modification and (where the system
// has one) change time, and a modification time older than readAt by
// more than the file times' granularity (recentSlack), so that a write
// in the same clock tick as the read cannot hide behind equal times.
func unchanged(before, now fs.FileInfo, readAt time.Time) bool {
	return os.SameFile(before, now) && before.Size() == now.Size() && before.Mode() == now.Mode() &&
		before.ModTime().Equal(now.ModTime()) && changeTime(before) == changeTime(now) &&
		now.ModTime().Before(readAt.Add(-recentSlack))
}
