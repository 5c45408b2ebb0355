module github.com/dsh-acp/dsh-acp

go 1.26.0

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/sourcegraph/jsonrpc2 v0.2.3
)

require golang.org/x/text v0.14.0

require mvdan.cc/sh/v3 v3.14.1
