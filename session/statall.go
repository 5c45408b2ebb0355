package session

import (
	"os"
	"sync"
)

// logStat is what the list needs of a log's stat: its size and
// modification time (Unix ns), or the error.
type logStat struct {
	size, mtime int64
	err         error
}

// statLog stats the log at p.
func statLog(p string) logStat {
	st, err := os.Stat(p)
	if err != nil {
		return logStat{err: err}
	}
	return logStat{size: st.Size(), mtime: st.ModTime().UnixNano()}
}

// statWorkers is how many stats statAll runs at once: a stat is a
// system call that waits in the kernel, so a few overlap even on one
// core.
const statWorkers = 4

// statAll stats every path, in parallel (statWorkers at once); the i-th
// result is paths[i]'s. The list of 10,000 sessions waits for 10,000
// stats: one at a time they were a third of its first page.
func statAll(paths []string) []logStat {
	out := make([]logStat, len(paths))
	if len(paths) < 2*statWorkers {
		for i, p := range paths {
			out[i] = statLog(p)
		}
		return out
	}
	var wg sync.WaitGroup
	chunk := (len(paths) + statWorkers - 1) / statWorkers
	for start := 0; start < len(paths); start += chunk {
		end := min(start+chunk, len(paths))
		wg.Go(func() {
			for i := start; i < end; i++ {
				out[i] = statLog(paths[i])
			}
		})
	}
	wg.Wait()
	return out
}
