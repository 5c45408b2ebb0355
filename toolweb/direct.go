package toolweb

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Limits of a direct fetch (web_fetch without a fetch API).
const (
	// MaxRedirects is the number of redirects a direct fetch follows.
	MaxRedirects = 5
	// MaxBodyBytes is how much of a response body a direct fetch reads:
	// 5 MiB; the rest is left out and the result says so.
	MaxBodyBytes = 5 << 20
	// FetchTimeout bounds one direct fetch, redirects and body included.
	FetchTimeout = 30 * time.Second
)

// page is a fetched page: the URL it was finally read from, its title
// (may be empty), its text (Markdown for HTML) and whether the body was
// cut at MaxBodyBytes.
type page struct {
	URL       string `json:"url"`
	Title     string `json:"title,omitempty"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
}

// direct fetches pages itself, over a client whose dialer refuses
// non-public addresses unless allowPrivate.
type direct struct {
	client    *http.Client
	userAgent string
}

func newDirect(reachable func(netip.AddrPort) bool, userAgent string) *direct {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: dialControl(reachable)}
	tr := &http.Transport{
		// No proxy: a proxy would connect for us and the address check
		// would judge the proxy, not the page's host.
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
	}
	c := &http.Client{
		Transport: tr,
		Timeout:   FetchTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return fmt.Errorf("stopped after %d redirects", MaxRedirects)
			}
			_, host, err := checkURL(req.URL.String())
			if err != nil {
				return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
			}
			// The permission asked was for the first URL's host: an
			// open redirect there would carry the URL's data to a host
			// nobody allowed.
			if host != strings.ToLower(via[0].URL.Hostname()) {
				return fmt.Errorf("redirected to another host, not followed: %s (fetch that URL to read it)", req.URL.Redacted())
			}
			return nil
		},
	}
	return &direct{client: c, userAgent: userAgent}
}

// fetch reads rawURL: HTML becomes Markdown, other text types stay as
// they are, anything else is refused naming its content type.
func (d *direct) fetch(ctx context.Context, rawURL string) (page, error) {
	u, _, err := checkURL(rawURL)
	if err != nil {
		return page{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return page{}, err
	}
	req.Header.Set("User-Agent", d.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")
	resp, err := d.client.Do(req)
	if err != nil {
		if isNetErrPrivate(err) {
			return page{}, fmt.Errorf("fetching %s: %w", rawURL, errPrivate)
		}
		return page{}, fmt.Errorf("fetching %s: %w", rawURL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	final := resp.Request.URL.String()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return page{}, fmt.Errorf("%s answered HTTP %s", final, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return page{}, fmt.Errorf("reading %s: %w", final, err)
	}
	p := page{URL: final}
	if len(body) > MaxBodyBytes {
		body, p.Truncated = body[:MaxBodyBytes], true
	}
	ctype := resp.Header.Get("Content-Type")
	if ctype == "" {
		ctype = http.DetectContentType(body)
	}
	kind, err := textKind(ctype)
	if err != nil {
		return page{}, fmt.Errorf("%s: %w", final, err)
	}
	text, err := decodeText(body, ctype)
	if err != nil {
		return page{}, fmt.Errorf("%s: %w", final, err)
	}
	if kind == kindHTML {
		p.Title = htmlTitle(text)
		text = toMarkdown(text, final)
	}
	p.Text = text
	return p, nil
}

// The kinds of body a direct fetch accepts.
const (
	kindHTML = "html"
	kindText = "text"
)

// textKind says how a body of content type ctype is read: HTML (and
// XHTML) is converted, text/*, JSON and XML types are kept as they are;
// anything else is an error naming the type.
func textKind(ctype string) (string, error) {
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return "", fmt.Errorf("unreadable content type %q", ctype)
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return kindHTML, nil
	case strings.HasPrefix(mt, "text/"), mt == "application/json", mt == "application/xml",
		mt == "application/javascript", strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return kindText, nil
	}
	return "", fmt.Errorf("the content type %s is not text; web_fetch reads HTML and text only", mt)
}

// decodeText returns body as UTF-8, decoded from the charset its content
// type (or, for HTML, its meta tag) declares.
func decodeText(body []byte, ctype string) (string, error) {
	r, err := charset.NewReader(bytes.NewReader(body), ctype)
	if err != nil {
		// An unknown charset: read the bytes as UTF-8 (invalid
		// sequences are replaced on the way to the model).
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("decoding the text: %w", err)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// htmlTitle is the text of the document's first <title>, "" if none.
func htmlTitle(doc string) string {
	z := html.NewTokenizer(strings.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken:
			if name, _ := z.TagName(); string(name) == "title" {
				if z.Next() == html.TextToken {
					return strings.Join(strings.Fields(string(z.Text())), " ")
				}
				return ""
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "head" {
				return ""
			}
		default:
		}
	}
}

// markdown is the HTML to Markdown converter: CommonMark with GitHub's
// tables and strikethrough. It is safe for concurrent use.
var markdown = converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
	table.NewTablePlugin(), strikethrough.NewStrikethroughPlugin()))

// toMarkdown converts the page doc read from final (its relative links
// made absolute against final). A page the converter refuses (the HTML
// parser gives up past 512 open elements) comes back as its HTML, after
// a line saying so: a page to read beats none.
func toMarkdown(doc, final string) string {
	md, err := markdown.ConvertString(doc, converter.WithDomain(final))
	if err != nil {
		return "(The page could not be converted to Markdown: " + err.Error() + "; its HTML follows.)\n\n" + doc
	}
	return md
}

// retryAfter reads a Retry-After header (seconds or an HTTP date) as a
// wait, bounded by limit; absent or unreadable means def.
func retryAfter(h string, now time.Time, def, limit time.Duration) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return def
	}
	var d time.Duration
	if n, err := strconv.Atoi(h); err == nil {
		d = time.Duration(max(n, 0)) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = max(t.Sub(now), 0)
	} else {
		return def
	}
	return min(d, limit)
}
