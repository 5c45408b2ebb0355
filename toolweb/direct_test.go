package toolweb

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func allowAll(netip.AddrPort) bool { return true }

func TestDirectHTMLToMarkdown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>  The  Page </title><script>var x=1;</script></head>`+
			`<body><h1>Hello</h1><p>Some <b>bold</b> text and <a href="/next">a link</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`)
	}))
	defer srv.Close()
	p, err := newDirect(allowAll, "test").fetch(context.Background(), srv.URL+"/page")
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "The Page" {
		t.Errorf("title = %q", p.Title)
	}
	for _, want := range []string{"# Hello", "**bold**", "[a link](" + srv.URL + "/next)", "- one", "- two"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("markdown lacks %q:\n%s", want, p.Text)
		}
	}
	if strings.Contains(p.Text, "var x") {
		t.Errorf("script text kept:\n%s", p.Text)
	}
	if p.URL != srv.URL+"/page" || p.Truncated {
		t.Errorf("url %q truncated %v", p.URL, p.Truncated)
	}
}

func TestDirectTextBinaryAndStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/plain":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "<b>not html</b>\n")
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"a":1}`)
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte{0x89, 'P', 'N', 'G', 0, 1, 2})
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			_, _ = w.Write([]byte{'c', 'a', 'f', 0xe9})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	d := newDirect(allowAll, "test")
	ctx := context.Background()
	if p, err := d.fetch(ctx, srv.URL+"/plain"); err != nil || p.Text != "<b>not html</b>\n" {
		t.Errorf("plain: %q, %v", p.Text, err)
	}
	if p, err := d.fetch(ctx, srv.URL+"/json"); err != nil || p.Text != `{"a":1}` {
		t.Errorf("json: %q, %v", p.Text, err)
	}
	if p, err := d.fetch(ctx, srv.URL+"/latin1"); err != nil || p.Text != "café" {
		t.Errorf("latin1: %q, %v", p.Text, err)
	}
	if _, err := d.fetch(ctx, srv.URL+"/png"); err == nil || !strings.Contains(err.Error(), "image/png is not text") {
		t.Errorf("png: %v", err)
	}
	if _, err := d.fetch(ctx, srv.URL+"/missing"); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("404: %v", err)
	}
	if _, err := d.fetch(ctx, "ftp://example.com/x"); err == nil || !strings.Contains(err.Error(), "only http and https") {
		t.Errorf("ftp: %v", err)
	}
}

func TestDirectRedirectsAndSize(t *testing.T) {
	big := strings.Repeat("x", MaxBodyBytes+100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		switch {
		case r.URL.Path == "/big":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, big)
		case r.URL.Path == "/final":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "arrived")
		case r.URL.Path == "/tofile":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		default:
			if _, err := fmt.Sscanf(r.URL.Path, "/hop/%d", &n); err != nil {
				http.NotFound(w, r)
				return
			}
			if n == 0 {
				http.Redirect(w, r, "/final", http.StatusFound)
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
		}
	}))
	defer srv.Close()
	d := newDirect(allowAll, "test")
	ctx := context.Background()
	// Five redirects are followed: /hop/4 .. /hop/0 then /final.
	if p, err := d.fetch(ctx, srv.URL+"/hop/4"); err != nil || p.Text != "arrived" || p.URL != srv.URL+"/final" {
		t.Errorf("5 redirects: %+v, %v", p, err)
	}
	if _, err := d.fetch(ctx, srv.URL+"/hop/5"); err == nil || !strings.Contains(err.Error(), "stopped after 5 redirects") {
		t.Errorf("6 redirects: %v", err)
	}
	if _, err := d.fetch(ctx, srv.URL+"/tofile"); err == nil || !strings.Contains(err.Error(), "only http and https") {
		t.Errorf("redirect to file: %v", err)
	}
	p, err := d.fetch(ctx, srv.URL+"/big")
	if err != nil || !p.Truncated || len(p.Text) != MaxBodyBytes {
		t.Errorf("big: truncated %v len %d, %v", p.Truncated, len(p.Text), err)
	}
}

// A loopback address is refused by default, also when a redirect (from
// an address the test counts as public) leads there.
func TestDirectRefusesPrivate(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "secret")
	}))
	defer target.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/", http.StatusFound)
	}))
	defer front.Close()
	ctx := context.Background()
	if _, err := newDirect(reachableBy(false), "test").fetch(ctx, target.URL); err == nil || !strings.Contains(err.Error(), "loopback, private or link-local") {
		t.Errorf("direct loopback: %v", err)
	}
	frontAddr := netip.MustParseAddrPort(strings.TrimPrefix(front.URL, "http://"))
	onlyFront := func(ap netip.AddrPort) bool { return ap == frontAddr }
	if _, err := newDirect(onlyFront, "test").fetch(ctx, front.URL); err == nil || !strings.Contains(err.Error(), "loopback, private or link-local") {
		t.Errorf("redirect to loopback: %v", err)
	}
	if p, err := newDirect(reachableBy(true), "test").fetch(ctx, front.URL); err != nil || p.Text != "secret" {
		t.Errorf("allowed: %q, %v", p.Text, err)
	}
}

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700::1111": true, "127.0.0.1": false, "10.1.2.3": false, "192.168.0.1": false,
		"172.16.0.1": false, "169.254.169.254": false, "100.64.0.1": false, "0.0.0.0": false, "::1": false,
		"fe80::1": false, "fd00::1": false, "::ffff:127.0.0.1": false, "224.0.0.1": false,
	} {
		if got := publicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestMarkdownTablesAndDeepPages(t *testing.T) {
	md := toMarkdown(`<table><tr><th>name</th><th>value</th></tr><tr><td>a</td><td>1</td></tr></table><p><del>old</del></p>`, "https://x.example/")
	if !strings.Contains(md, "| name | value |") || !strings.Contains(md, "| a    | 1     |") || !strings.Contains(md, "~~old~~") {
		t.Errorf("markdown:\n%s", md)
	}
	deep := strings.Repeat("<div>", 600) + "deep text" + strings.Repeat("</div>", 600)
	if md := toMarkdown(deep, "https://x.example/"); !strings.HasPrefix(md, "(The page could not be converted to Markdown: ") || !strings.Contains(md, "deep text") {
		t.Errorf("deep page: %.200s", md)
	}
}

// A redirect to another host is not followed: "Always allow" covers the
// host asked about, and an open redirect there would carry the URL's
// data to a host nobody allowed. The error names the target, which a
// fetch of its own may reach (asking for its host).
func TestDirectRedirectToOtherHost(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "got "+r.URL.RawQuery)
	}))
	defer other.Close()
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/collect?secret=1"
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			http.Redirect(w, r, "/final", http.StatusFound)
			return
		}
		if r.URL.Path == "/final" {
			fmt.Fprint(w, "same host")
			return
		}
		http.Redirect(w, r, otherURL, http.StatusFound)
	}))
	defer front.Close()
	d := newDirect(allowAll, "test")
	ctx := context.Background()
	if p, err := d.fetch(ctx, front.URL+"/url?q=x"); err == nil || !strings.Contains(err.Error(), otherURL) {
		t.Errorf("redirect to another host: %+v, %v", p, err)
	}
	if p, err := d.fetch(ctx, front.URL+"/same"); err != nil || p.Text != "same host" {
		t.Errorf("redirect on the same host: %+v, %v", p, err)
	}
}
