package secret

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Mask replaces every secret the Redactor finds.
const Mask = "***"

// Redactor masks registered secret values in text. It is safe for concurrent use: a
// member registers the values of each run it opens while every other run keeps logging.
// The zero value is ready to use.
type Redactor struct {
	mu       sync.RWMutex
	forms    map[string]struct{}
	replacer *strings.Replacer // nil until a value is registered
	// pieces recycles the collectors Redact hands the replacer: one passed as an
	// io.Writer escapes, so a fresh one per line would be an allocation per line.
	pieces sync.Pool
}

// NewRedactor returns an empty Redactor; it masks URL passwords from the start.
func NewRedactor() *Redactor { return &Redactor{} }

// Register adds secret values. Empty values and values shorter than MinLen characters are
// ignored: they cannot be secret params (Tokenize refuses them), and masking a
// two-letter string would blank out half of every log line.
//
// Each value is masked as written and in the forms it takes on its way into text: URL
// query- and path-escaped, escaped inside a JSON string, and base64 (standard and URL
// alphabets, padded and not, and the run of characters it produces inside a longer
// base64 text such as a Basic auth header).
func (r *Redactor) Register(values ...string) {
	var add []string
	for _, v := range values {
		if utf8.RuneCountInString(v) >= MinLen {
			add = append(add, forms(v)...)
		}
	}
	if len(add) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.forms == nil {
		r.forms = map[string]struct{}{}
	}
	grew := false
	for _, f := range add {
		if _, ok := r.forms[f]; !ok {
			r.forms[f] = struct{}{}
			grew = true
		}
	}
	if !grew {
		return
	}
	all := make([]string, 0, len(r.forms))
	for f := range r.forms {
		all = append(all, f)
	}
	// Longest first: the Replacer tries pairs in argument order at each position, so a
	// secret that contains another is masked whole.
	slices.SortFunc(all, func(a, b string) int {
		if c := cmp.Compare(len(b), len(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(all))
	for _, f := range all {
		pairs = append(pairs, f, Mask)
	}
	r.replacer = strings.NewReplacer(pairs...)
}

// Redact returns s with every registered secret (in every form) and the password of every
// scheme://user:password@host replaced by Mask.
func (r *Redactor) Redact(s string) string {
	r.mu.RLock()
	rep := r.replacer
	r.mu.RUnlock()
	if rep != nil {
		out, _ := r.pieces.Get().(*pieces)
		if out == nil { // the pool is empty (or the zero Redactor's first line)
			out = new(pieces)
		}
		_, _ = rep.WriteString(out, s) // pieces never fails
		s = out.String()
		out.reset()
		r.pieces.Put(out)
	}
	return MaskUserinfo(s)
}

// pieces collects what a strings.Replacer writes, keeping the text it was given when that
// comes back in one piece. A Replacer writes its input in a single call when nothing in it
// matches, so a line without a secret (nearly every line) is returned without a copy,
// where Replacer.Replace builds a new string for every line it is given.
type pieces struct {
	first string
	n     int
	b     strings.Builder
}

func (p *pieces) WriteString(s string) (int, error) {
	p.n++
	switch p.n {
	case 1:
		p.first = s
	case 2:
		p.b.Grow(len(p.first) + len(s) + len(Mask))
		p.b.WriteString(p.first)
		p.b.WriteString(s)
	default:
		p.b.WriteString(s)
	}
	return len(s), nil
}

// Write is WriteString for callers that hold bytes (io.Writer).
func (p *pieces) Write(b []byte) (int, error) { return p.WriteString(string(b)) }

// reset empties p for its next line. The string a second piece built stays with its
// caller: a Builder's Reset lets go of its buffer rather than reusing it.
func (p *pieces) reset() {
	p.first, p.n = "", 0
	p.b.Reset()
}

func (p *pieces) String() string {
	if p.n <= 1 {
		return p.first
	}
	return p.b.String()
}

// forms returns v and the encodings it may appear in, each at least MinLen bytes long.
func forms(v string) []string {
	out := []string{v, url.QueryEscape(v), url.PathEscape(v), jsonInner(v, true), jsonInner(v, false)}
	raw := []byte(v)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		out = append(out, enc.EncodeToString(raw))
	}
	out = append(out, base64Cores(raw)...)
	out = slices.DeleteFunc(out, func(f string) bool { return len(f) < MinLen })
	slices.Sort(out)
	return slices.Compact(out)
}

// jsonInner is v as it appears between the quotes of a JSON string, with and without the
// HTML escaping encoding/json applies by default.
func jsonInner(v string, escapeHTML bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(v) // encoding a string cannot fail
	out := strings.TrimSuffix(buf.String(), "\n")
	return out[1 : len(out)-1]
}

// base64Cores returns, for each of the three byte offsets v can start at inside a longer
// base64 text, the characters that depend on v's bytes alone — in both alphabets. The
// characters at the edges mix in neighbouring bytes and are left out.
func base64Cores(v []byte) []string {
	var out []string
	for shift := range 3 {
		buf := make([]byte, shift+len(v))
		copy(buf[shift:], v)
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			s := enc.EncodeToString(buf)
			from := (8*shift + 5) / 6      // first character made only of v's bits
			to := 8 * (shift + len(v)) / 6 // characters fully inside v's bits end here
			if to-from >= MinLen {
				out = append(out, s[from:to])
			}
		}
	}
	return out
}

// MaskUserinfo replaces the password of every URL userinfo in s (scheme://user:pw@host,
// also scheme://:pw@host) by Mask, whether or not the password was registered: connection
// strings are the most common way a credential reaches a log line.
func MaskUserinfo(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is already written to b
	for i := 0; ; {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			break
		}
		start := i + j + 3
		end := start
		for end < len(s) && !endsAuthority(s[end]) {
			end++
		}
		auth := s[start:end]
		if at := strings.LastIndexByte(auth, '@'); at >= 0 && start >= done {
			if colon := strings.IndexByte(auth[:at], ':'); colon >= 0 && auth[colon+1:at] != Mask {
				b.WriteString(s[done : start+colon+1])
				b.WriteString(Mask)
				done = start + at
			}
		}
		// Go on from just after "://", not from the end of the authority: text such as
		// "a://u:p@h,b://v:q@k" has the next scheme inside what was scanned.
		i = start
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// endsAuthority reports whether c cannot be part of a URL authority as it appears in
// text. '@' and ':' are part of it; quotes and backslashes end it, so a URL inside a
// JSON or quoted string does not run into the text after it.
func endsAuthority(c byte) bool {
	switch c {
	case '/', '?', '#', ' ', '\t', '\n', '\r', '"', '<', '>', '\\', '`':
		return true
	}
	return false
}
