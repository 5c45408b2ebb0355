package toolmcp

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"strings"

	"github.com/dsh-acp/dsh-acp/tools"
)

// pathAccess is an MCP tool's Access: the string values anywhere in its
// arguments that look like paths (absolute, starting with "~", a
// file:// URL's path, or holding a ".." component), for the permission
// check to resolve and judge (a path outside the project asks, whatever
// the tool's class). The server's schema says nothing trustworthy about
// which arguments are paths, so every string is looked at. Arguments
// that are not JSON touch nothing here (the registry refuses them).
//
// A resolved call hands over its parse (accessParsed); arguments the
// registry refuses for a key given twice are decoded again as JSON (the
// last value of a key counts), in case the check sees them.
func (d *toolDef) pathAccess(args json.RawMessage) (tools.Access, bool) {
	v, err := parseArgs(args)
	return d.accessParsed(args, v, err)
}

// accessParsed is pathAccess given ParseArgs's v and err for args.
func (d *toolDef) accessParsed(args json.RawMessage, v any, err error) (tools.Access, bool) {
	if len(bytes.TrimSpace(args)) == 0 {
		return tools.Access{}, false
	}
	if onlyDuplicates(err) {
		err = json.Unmarshal(args, &v)
	}
	if err != nil {
		return tools.Access{}, false
	}
	var acc tools.Access
	walkStrings(v, func(s string) {
		if p, ok := pathLike(s); ok {
			acc.Paths = append(acc.Paths, p)
		}
	})
	return acc, true
}

// walkStrings calls f with every string in v (keys of objects too).
func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	case map[string]any:
		for k, e := range x {
			f(k)
			walkStrings(e, f)
		}
	}
}

// pathLike returns the path s names when it looks like one the
// permission check must judge (see pathAccess).
func pathLike(s string) (string, bool) {
	if rest, ok := strings.CutPrefix(s, "file://"); ok {
		if u, err := url.Parse(s); err == nil && u.Path != "" {
			return u.Path, true
		}
		return rest, true
	}
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		// The server's side would take it as the home folder.
		if home, err := os.UserHomeDir(); err == nil {
			return home + s[1:], true
		}
		return "/" + s, true
	case strings.HasPrefix(s, "~"):
		// Another user's home: outside the project.
		return "/" + s, true
	case strings.HasPrefix(s, "/"):
		return s, true
	case s == "..", strings.HasPrefix(s, "../"), strings.Contains(s, "/../"), strings.HasSuffix(s, "/.."):
		return s, true
	}
	return "", false
}
