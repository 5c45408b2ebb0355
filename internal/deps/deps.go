// Package deps pins the project's module dependencies while the packages
// that use them are being written; it is removed once each is imported for
// real.
package deps

import (
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/sergi/go-diff/diffmatchpatch"
	_ "github.com/sourcegraph/jsonrpc2"
	_ "mvdan.cc/sh/v3/syntax"
)
