package toolsearch

// pathError is a failed operation on a path, like fs.PathError with a
// shorter text: "open /x: permission denied".
type pathError struct {
	op, path string
	err      error
}

func (e *pathError) Error() string { return e.op + " " + e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }
