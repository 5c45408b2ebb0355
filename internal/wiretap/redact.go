package wiretap

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Redacted replaces every secret in a trace.
const Redacted = "[REDACTED]"

// Redactor removes secrets from ACP messages before they are traced.
// The rule, applied to every JSON string (member names and values) and
// to lines that are not JSON:
//
//  1. Each of the known secrets (the API key), wherever it occurs, also
//     split across the strings of one member in consecutive messages (a
//     model repeating the key streams it in pieces): a string whose end,
//     with the ends of the member's earlier strings, begins a secret
//     (minPartial bytes or more of it) loses that end, and the rest of
//     the secret in the strings after it. Secrets shorter than 8 bytes
//     are ignored (they would redact words).
//  2. A string value, or each string of an array value, of a member whose
//     name looks secret: one of its words (split at case changes, "_",
//     "-", "." and spaces) is key, apikey, token, secret, password,
//     passwd, pwd, passphrase, credential(s), auth, authorization, cookie
//     or bearer, or ends with password, passwd, passphrase, token, secret,
//     apikey, secretkey or accesskey (words run together: "PGPASSWORD",
//     "AUTHTOKEN") ("apiKey", "GITHUB_TOKEN", "X-Api-Key"; not "tokens",
//     "monkey", "sessionId").
//  3. The "value" string of an object whose "name" string looks secret by
//     the same rule: ACP's environment variables and HTTP headers of MCP
//     servers ({"name": "GITHUB_TOKEN", "value": "…"}); and in an array
//     (an MCP server's args), the string after a flag whose name looks
//     secret (["--api-key", "…"]).
//  4. Text that looks like a secret: an Authorization scheme's credentials
//     ("Bearer …", "Authorization: Basic …"), well-known token shapes (sk-…, ghp_…,
//     github_pat_…, glpat-…, xox?-…, AKIA…, AIza…, JWTs), the password of a
//     URL's user info (scheme://user:…@), a PEM private key block, and
//     the value (6 or more characters, not a $reference) of an
//     assignment whose name looks secret by the rule of 2
//     (DSH_API_KEY=…, "password": …, token: …, --api-key=…; not
//     key=$DSH_API_KEY).
//
// Structure, member order, numbers and everything else are kept, so a
// trace still shows what happened. The zero value redacts by 2 to 4.
// Safe for concurrent use.
type Redactor struct {
	mu      sync.Mutex
	secrets []string
	// tails holds, per member path ("params/update/content/text"), the
	// end of the strings seen there last (as sent), for rule 1 across
	// messages.
	tails map[string]string
}

// minPartial is the shortest beginning of a known secret redacted at the
// end of a string, before the rest of the secret has come: the first
// minPartial-1 bytes of a secret streamed in pieces may stay.
const minPartial = 4

// maxTails bounds the member paths whose string ends are kept.
const maxTails = 256

// NewRedactor returns a Redactor that also removes each of secrets.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		r.Add(s)
	}
	return r
}

// Add makes secret one of the known secrets from now on (a key found
// after the start: a login while the agent runs). A secret shorter than
// 8 bytes, or known already, is ignored.
func (r *Redactor) Add(secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(secret) < 8 || slices.Contains(r.secrets, secret) {
		return
	}
	r.secrets = append(r.secrets, secret)
}

// Message returns the JSON message line with its secrets redacted
// (compact, member order kept), and ok false when line is not one JSON
// value (then use Text).
func (r *Redactor) Message(line []byte) (json.RawMessage, bool) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	n, err := decodeNode(d, 0)
	if err != nil {
		return nil, false
	}
	if _, err := d.Token(); err == nil {
		return nil, false // more than one value
	}
	r.mu.Lock()
	r.walk(n, "", "")
	r.mu.Unlock()
	var b bytes.Buffer
	n.encode(&b)
	return b.Bytes(), true
}

// Writer returns w with the text of each Write redacted as Text
// redacts it: for a log whose handler writes each record in one Write
// (log/slog's), so the log holds no more secrets than the trace. It
// reports len(p) written when w took the redacted text.
func (r *Redactor) Writer(w io.Writer) io.Writer { return redactWriter{r: r, w: w} }

type redactWriter struct {
	r *Redactor
	w io.Writer
}

func (x redactWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(x.w, x.r.Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Text returns s with the secrets of rules 1 and 4 redacted. Each
// pattern runs only on text that holds its fixed part, so plain text
// costs a few substring searches.
func (r *Redactor) Text(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.text(s)
}

// text is Text with r.mu held.
func (r *Redactor) text(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, Redacted)
	}
	return shapes(s)
}

// shapes redacts by rule 4.
func shapes(s string) string {
	if strings.Contains(s, "PRIVATE KEY-----") {
		s = pemBlock().ReplaceAllString(s, "${1}"+Redacted+"${2}")
	}
	if lower := strings.ToLower(s); strings.Contains(lower, "bearer") || strings.Contains(lower, "basic") {
		s = authScheme().ReplaceAllString(s, "${1} "+Redacted)
	}
	for _, p := range tokenPrefixes {
		if strings.Contains(s, p) {
			s = tokenShape().ReplaceAllString(s, Redacted)
			break
		}
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = urlPassword().ReplaceAllString(s, "${1}:"+Redacted+"@")
	}
	return redactAssignments(s)
}

var (
	pemBlock = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(-----BEGIN [A-Z ]*PRIVATE KEY-----)[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----)`)
	})
	authScheme = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(\bbearer|authorization:\s*basic)\s+[A-Za-z0-9._~+/=-]{8,}`)
	})
	tokenShape = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`)
	})
	// tokenPrefixes are the fixed starts of tokenShape's shapes.
	tokenPrefixes = []string{"sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "AKIA", "AIza", "eyJ"}
	urlPassword   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@"']+):[^/\s@"']+@`)
	})
)

// minAssignedSecret is the shortest assigned value redacted.
const minAssignedSecret = 6

// redactAssignments redacts the value of each `name=value` or
// `name: value` (the name optionally quoted, the value optionally
// quoted) whose name looks secret: a value of minAssignedSecret or more
// characters up to a space, quote, backslash (an escaped quote in a
// log's quoted value), comma or semicolon, unless it is a
// $reference or already redacted.
func redactAssignments(s string) string {
	var b strings.Builder
	last := 0 // s[:last] is in b
	for i := 0; i < len(s); i++ {
		if s[i] != '=' && s[i] != ':' {
			continue
		}
		// The name: identifier characters before i, past an optional
		// closing quote and spaces.
		j := i
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		if j > 0 && s[j-1] == '"' {
			j--
		}
		end := j
		for j > 0 && nameByte(s[j-1]) {
			j--
		}
		for j < end && s[j] == '-' {
			j++ // a flag: --api-key=…
		}
		if j == end || !(isLetter(s[j]) || s[j] == '_') || !secretName(s[j:end]) {
			continue
		}
		// The value: after spaces and an optional quote.
		k := i + 1
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		if k < len(s) && (s[k] == '"' || s[k] == '\'') {
			k++
		}
		v := k
		for v < len(s) && !strings.ContainsRune(" \t\r\n\"'\\,;", rune(s[v])) {
			v++
		}
		val := s[k:v]
		if len(val) < minAssignedSecret || val[0] == '$' || strings.HasPrefix(val, Redacted) {
			continue
		}
		b.WriteString(s[last:k])
		b.WriteString(Redacted)
		last, i = v, v-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func nameByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// secretWords are the words of a secret-looking name.
var secretWords = map[string]bool{
	"key": true, "apikey": true, "token": true, "secret": true, "password": true, "passwd": true,
	"pwd": true, "passphrase": true, "credential": true, "credentials": true, "auth": true,
	"authorization": true, "cookie": true, "bearer": true,
}

// secretFlag reports whether s is a command-line flag whose name looks
// secret ("--api-key", "-token"): in an argument list, the string after
// it is its value.
func secretFlag(s string) bool {
	name := strings.TrimLeft(s, "-")
	if len(name) == len(s) || name == "" || !isLetter(name[0]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i]) {
			return false
		}
	}
	return secretName(name)
}

// secretEnds are the endings that make a word secret-looking: words run
// together ("PGPASSWORD"), none of them the end of a harmless word.
var secretEnds = []string{"password", "passwd", "passphrase", "token", "secret", "apikey", "secretkey", "accesskey"}

// secretName reports whether a member, variable or header name looks
// secret (rule 2 of Redactor).
func secretName(name string) bool {
	var word []rune
	prevLower := false
	check := func() bool {
		w := strings.ToLower(string(word))
		word = word[:0]
		if secretWords[w] {
			return true
		}
		for _, end := range secretEnds {
			if strings.HasSuffix(w, end) {
				return true
			}
		}
		return false
	}
	for _, c := range name {
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			if check() {
				return true
			}
			prevLower = false
			continue
		case unicode.IsUpper(c) && prevLower:
			if check() {
				return true
			}
		}
		word = append(word, c)
		prevLower = unicode.IsLower(c) || unicode.IsDigit(c)
	}
	return check()
}

// walk redacts n in place (r.mu held); name is the member name n is the
// value of, path the member names leading to n, "/"-separated.
func (r *Redactor) walk(n *node, name, path string) {
	secret := name != "" && secretName(name)
	switch n.kind {
	case kindString:
		if secret {
			n.str = Redacted
		} else {
			n.str = shapes(r.known(n.str, path))
		}
	case kindArray:
		flag := false // the string before was a secret flag
		for _, v := range n.vals {
			if v.kind == kindString && (secret || flag && !strings.HasPrefix(v.str, "-")) {
				v.str, flag = Redacted, false
				continue
			}
			flag = v.kind == kindString && secretFlag(v.str)
			r.walk(v, "", path)
		}
	case kindObject:
		nameSecret := false
		for i, k := range n.keys {
			if k == "name" && n.vals[i].kind == kindString && secretName(n.vals[i].str) {
				nameSecret = true
			}
		}
		for i, k := range n.keys {
			n.keys[i] = r.text(k)
			if nameSecret && k == "value" && n.vals[i].kind == kindString {
				n.vals[i].str = Redacted
				continue
			}
			r.walk(n.vals[i], k, path+"/"+k)
		}
	}
}

// known redacts the known secrets in s, the next string at path (r.mu
// held), by rule 1: each secret in s, each part in s of a secret that
// began in the strings before it at path, and an end of s that (with
// those strings) is a beginning of a secret of minPartial bytes or more.
func (r *Redactor) known(s, path string) string {
	if len(r.secrets) == 0 {
		return s
	}
	tail := r.tails[path]
	joined := tail + s
	keep := 0
	var cuts [][2]int // byte ranges of joined to redact, inside s
	cut := func(from, to int) {
		cuts = append(cuts, [2]int{max(from, len(tail)), to})
	}
	for _, sec := range r.secrets {
		keep = max(keep, len(sec)-1)
		for i := 0; ; {
			j := strings.Index(joined[i:], sec)
			if j < 0 {
				break
			}
			if i+j+len(sec) > len(tail) {
				cut(i+j, i+j+len(sec))
			}
			i += j + 1
		}
		// The longest end of joined that begins sec.
		for p := max(0, len(joined)-len(sec)+1); p <= len(joined)-minPartial; p++ {
			if joined[p] == sec[0] && strings.HasPrefix(sec, joined[p:]) {
				if len(joined) > len(tail) {
					cut(p, len(joined))
				}
				break
			}
		}
	}
	if _, ok := r.tails[path]; !ok && len(r.tails) >= maxTails {
		clear(r.tails)
	}
	if r.tails == nil {
		r.tails = map[string]string{}
	}
	r.tails[path] = joined[max(0, len(joined)-keep):]
	if len(cuts) == 0 {
		return s
	}
	// Merge the ranges and replace each with one Redacted.
	slices.SortFunc(cuts, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	at := len(tail)
	for i := 0; i < len(cuts); {
		from, to := cuts[i][0], cuts[i][1]
		for i++; i < len(cuts) && cuts[i][0] <= to; i++ {
			to = max(to, cuts[i][1])
		}
		b.WriteString(joined[at:from])
		b.WriteString(Redacted)
		at = to
	}
	b.WriteString(joined[at:])
	return b.String()
}
