package sandbox

import "os"

// writable reports whether p is not read-only (Windows has no access(2);
// the read-only attribute is what the file mode shows).
func writable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().Perm()&0o200 != 0
}
