package toolmcp

import (
	"fmt"
	"strings"
)

// The transports a Server can name (ACP McpServer "type"; stdio has none
// on the wire).
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// What this package serves besides stdio, for the agent's ACP
// mcpCapabilities: streamable HTTP, and the old HTTP+SSE transport of
// MCP 2024-11-05, which the Go SDK's client still speaks
// (mcp.SSEClientTransport).
const (
	SupportsHTTP = true
	SupportsSSE  = true
)

// EnvVariable is an environment variable of a stdio server (ACP
// EnvVariable).
type EnvVariable struct {
	Name, Value string
}

// HTTPHeader is a header sent with every request to an HTTP or SSE
// server (ACP HttpHeader).
type HTTPHeader struct {
	Name, Value string
}

// Server is one MCP server to start, as the editor configures it (ACP
// McpServer: McpServerStdio, McpServerHttp, McpServerSse).
type Server struct {
	// Name is the human-readable name; the tools are named after it
	// (mcp__<name>__<tool>, sanitized).
	Name string
	// Type is TransportStdio (or ""), TransportHTTP or TransportSSE.
	Type string
	// Command, Args and Env start a stdio server: Command is the
	// executable (ACP says an absolute path; a bare name is looked up in
	// PATH), Env is added to the agent's environment less its secrets
	// (see Start).
	Command string
	Args    []string
	Env     []EnvVariable
	// URL and Headers reach an HTTP or SSE server.
	URL     string
	Headers []HTTPHeader
	// Trusted: the user vouches for the server's read-only hints (a
	// configuration choice): its tools with readOnlyHint are read-only
	// to the permission check (plan mode runs them). Otherwise a hint is
	// only a claim (tools.ClassReadOnlyClaimed).
	Trusted bool
}

// transport returns the server's transport, "" read as stdio.
func (s Server) transport() string {
	if s.Type == "" {
		return TransportStdio
	}
	return s.Type
}

// check reports what makes s unusable: no command for stdio, no http(s)
// URL for HTTP and SSE, an unknown transport.
func (s Server) check() error {
	switch s.transport() {
	case TransportStdio:
		if s.Command == "" {
			return fmt.Errorf("no command to start")
		}
	case TransportHTTP, TransportSSE:
		if s.URL == "" {
			return fmt.Errorf("no URL")
		}
		if !hasHTTPScheme(s.URL) {
			return fmt.Errorf("URL %q is not http:// or https://", s.URL)
		}
	default:
		return fmt.Errorf("transport %q is not supported (stdio, http and sse are)", s.Type)
	}
	return nil
}

func hasHTTPScheme(u string) bool {
	l := strings.ToLower(u)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}
