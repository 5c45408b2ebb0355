package toolweb

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// errPrivate is the failure of a connection to an address web_fetch does
// not reach without --web-allow-private.
var errPrivate = errors.New("refused: the address is loopback, private or link-local (web_fetch reaches only public addresses)")

// publicAddr reports whether a is an address web_fetch may connect to by
// default: not loopback, private (RFC 1918, fc00::/7), link-local,
// unspecified, multicast, CGNAT (100.64.0.0/10) or an IPv4-mapped form of
// one of those.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	switch {
	case !a.IsValid(), a.IsLoopback(), a.IsPrivate(), a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(),
		a.IsInterfaceLocalMulticast(), a.IsMulticast(), a.IsUnspecified():
		return false
	}
	if a.Is4() && cgnat.Contains(a) {
		return false
	}
	return true
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// dialControl is the net.Dialer Control of direct fetches: it runs after
// DNS resolution, on the address actually connected to, for the first
// request and every redirect, so a name that resolves to a private
// address (or changes its answer between two lookups) is refused too.
// The policy says which addresses may be dialled (reachable).
func dialControl(reachable func(netip.AddrPort) bool) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("web_fetch: unexpected dial address %q: %w", address, err)
		}
		if !reachable(ap) {
			return fmt.Errorf("%s: %w", ap.Addr(), errPrivate)
		}
		return nil
	}
}

// reachableBy is the address policy of direct fetches: every address
// with allowPrivate, else public ones only.
func reachableBy(allowPrivate bool) func(netip.AddrPort) bool {
	return func(ap netip.AddrPort) bool { return allowPrivate || publicAddr(ap.Addr()) }
}

// checkURL parses raw as a URL web_fetch accepts: http or https with a
// host. It returns the URL and its host name in lower case.
func checkURL(raw string) (*url.URL, string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, "", fmt.Errorf("not a valid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", fmt.Errorf("only http and https URLs can be fetched, not %q", raw)
	}
	if u.Hostname() == "" {
		return nil, "", fmt.Errorf("the URL %q has no host", raw)
	}
	if u.User != nil {
		return nil, "", fmt.Errorf("the URL %q carries credentials; they are not sent", raw)
	}
	return u, strings.ToLower(u.Hostname()), nil
}

// hostOf is raw's host name in lower case, "" when raw is not a URL
// web_fetch accepts.
func hostOf(raw string) string {
	_, h, err := checkURL(raw)
	if err != nil {
		return ""
	}
	return h
}

// isNetErrPrivate reports whether err is (or wraps) errPrivate.
func isNetErrPrivate(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) {
		return errors.Is(op.Err, errPrivate)
	}
	return errors.Is(err, errPrivate)
}
