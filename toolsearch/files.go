package toolsearch

import "context"

// WalkFiles visits the regular files below root (absolute and clean)
// that grep and glob would search: the same ignore rules (.gitignore,
// .ignore and .git/info/exclude at every level), .git never entered,
// symbolic links followed only when they lead inside root. visit gets
// the file's path and its path relative to root with "/" separators; it
// may be called from several goroutines at once. A visit error stops the
// walk and is returned, and so is ctx's error.
func WalkFiles(ctx context.Context, root string, visit func(path, rel string) error) error {
	return newWalk(root, root, root).run(ctx, visit)
}
