package pipeline

import (
	"fmt"
	"strings"
)

// DirectiveKind names what a directive reads (SPEC §1.2).
type DirectiveKind string

// Directive kinds.
const (
	DirectiveEnv      DirectiveKind = "env"      // ${env:NAME}
	DirectiveSecret   DirectiveKind = "secret"   // ${secret:NAME}
	DirectiveFile     DirectiveKind = "file"     // ${file:PATH}
	DirectiveParam    DirectiveKind = "param"    // ${param.NAME}
	DirectiveNow      DirectiveKind = "now"      // ${now.date|datetime|unix}
	DirectiveBackfill DirectiveKind = "backfill" // ${backfill.start|end}
)

// The only arguments allowed under now and backfill.
const (
	NowDate       = "date"
	NowDatetime   = "datetime"
	NowUnix       = "unix"
	BackfillStart = "start"
	BackfillEnd   = "end"
)

// Directive is one ${...} reference inside a scalar.
type Directive struct {
	Kind DirectiveKind
	Arg  string // NAME, PATH, or the word after now./backfill.
	Raw  string // the directive exactly as written, e.g. ${env:PG_URL}, for messages
}

// Part is one piece of a Template: literal text or a directive, never both.
type Part struct {
	Literal   string     // with $${ already unescaped to ${
	Directive *Directive // nil for literal parts
}

// Template is a scalar split into literal text and directives.
type Template struct {
	Parts []Part
}

// DirectiveError is a directive that does not parse. Raw is quoted in the message so the
// user can find it in the text.
type DirectiveError struct {
	Raw     string
	Message string
}

func (e *DirectiveError) Error() string { return e.Raw + ": " + e.Message }

// ParseTemplate splits s into literal text and directives. It only parses; resolving a
// directive does I/O and happens in the application layer. Every malformed directive is an
// error quoting it: a typo must never silently become literal text that ends up in a
// connection string.
func ParseTemplate(s string) (Template, error) {
	var t Template
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.Parts = append(t.Parts, Part{Literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			lit.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			lit.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return Template{}, &DirectiveError{Raw: s[i:], Message: "unterminated directive: add the closing } (write $${ for a literal ${)"}
		}
		raw := s[i : i+end+1]
		d, err := parseDirective(raw)
		if err != nil {
			return Template{}, err
		}
		flush()
		t.Parts = append(t.Parts, Part{Directive: &d})
		i += end + 1
	}
	flush()
	return t, nil
}

const kindsHelp = "use ${env:NAME}, ${secret:NAME}, ${file:PATH}, ${param.NAME}, ${now.date}, ${now.datetime}, ${now.unix}, ${backfill.start} or ${backfill.end}"

func parseDirective(raw string) (Directive, error) {
	body := raw[2 : len(raw)-1]
	fail := func(format string, a ...any) (Directive, error) {
		return Directive{}, &DirectiveError{Raw: raw, Message: fmt.Sprintf(format, a...)}
	}
	if body == "" {
		return fail("empty directive; %s", kindsHelp)
	}
	if strings.Contains(body, "${") {
		return fail("directives do not nest")
	}
	// The separator tells the family apart: env/secret/file take free text after a colon,
	// the rest are dotted names.
	colon := strings.IndexByte(body, ':')
	dot := strings.IndexByte(body, '.')
	var head, arg string
	var sep byte
	switch {
	case colon >= 0 && (dot < 0 || colon < dot):
		head, arg, sep = body[:colon], body[colon+1:], ':'
	case dot >= 0:
		head, arg, sep = body[:dot], body[dot+1:], '.'
	default:
		head = body
	}
	kind := DirectiveKind(head)
	d := Directive{Kind: kind, Arg: arg, Raw: raw}
	switch kind {
	case DirectiveEnv, DirectiveSecret:
		if sep != ':' {
			return fail("write ${%s:NAME}", head)
		}
		if arg == "" {
			return fail("missing the variable name: write ${%s:NAME}", head)
		}
		if !validEnvName(arg) {
			return fail("%q is not an environment variable name (letters, digits and _, not starting with a digit)", arg)
		}
	case DirectiveFile:
		if sep != ':' {
			return fail("write ${file:PATH}")
		}
		if strings.TrimSpace(arg) == "" {
			return fail("missing the path: write ${file:PATH}")
		}
	case DirectiveParam:
		if sep != '.' {
			return fail("write ${param.NAME}")
		}
		if arg == "" {
			return fail("missing the param name: write ${param.NAME}")
		}
		if !validParamName(arg) {
			return fail("%q is not a valid param name", arg)
		}
	case DirectiveNow:
		if sep != '.' || (arg != NowDate && arg != NowDatetime && arg != NowUnix) {
			return fail("nothing else under now: use ${now.date}, ${now.datetime} or ${now.unix}")
		}
	case DirectiveBackfill:
		if sep != '.' || (arg != BackfillStart && arg != BackfillEnd) {
			return fail("use ${backfill.start} or ${backfill.end}")
		}
	default:
		return fail("unknown directive %q; %s", head, kindsHelp)
	}
	return d, nil
}

func validEnvName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// Single returns the directive when the whole scalar is exactly one directive — the case
// where a ${param.X} keeps the param's type instead of becoming text.
func (t Template) Single() (Directive, bool) {
	if len(t.Parts) == 1 && t.Parts[0].Directive != nil {
		return *t.Parts[0].Directive, true
	}
	return Directive{}, false
}

// Directives lists the directives in order of appearance.
func (t Template) Directives() []Directive {
	var out []Directive
	for _, p := range t.Parts {
		if p.Directive != nil {
			out = append(out, *p.Directive)
		}
	}
	return out
}

// Literal returns the text when the template holds no directive (escapes undone).
func (t Template) Literal() (string, bool) {
	var b strings.Builder
	for _, p := range t.Parts {
		if p.Directive != nil {
			return "", false
		}
		b.WriteString(p.Literal)
	}
	return b.String(), true
}
