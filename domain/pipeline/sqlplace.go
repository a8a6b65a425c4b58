package pipeline

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Misplaced is a bind directive (SPEC §14.2) that does not stand where a value may stand
// in a SQL query: inside quotes, inside a comment, or joined to a name. Sent as a bind
// parameter it would be a literal "$1" or "?" there, so it is refused with the fix.
type Misplaced struct {
	Directive    string // as written, e.g. ${param.day}
	Line, Column int    // within the query text, 1-based
	Where        string // what it is inside, for the message
	Written      string // the surrounding text as written, e.g. '${param.day}'
	Fix          string // what to write instead of Written; "" when there is no direct rewrite
}

// Message explains the refusal and shows the unquoted form.
func (m Misplaced) Message() string {
	head := fmt.Sprintf("%s at line %d, column %d of the query is %s", m.Directive, m.Line, m.Column, m.Where)
	const why = "params, ${now.*} and ${backfill.*} are sent as bind parameters, never pasted into the SQL text"
	if m.Fix != "" {
		return fmt.Sprintf("%s (%s): %s, so write %s instead of %s", head, m.Written, why, m.Fix, m.Written)
	}
	return fmt.Sprintf("%s (%s): %s, so one can stand only where a value may (e.g. day = %s); it cannot be part of a "+
		"name, a quoted identifier or a comment", head, m.Written, why, m.Directive)
}

// MisplacedDirectives finds the bind directives of SQL text s that do not stand where a
// value may. It parses the text only as far as placing a directive needs: strings,
// quoted identifiers and comments of the dialect. env, secret and file directives are
// the operator's text and may stand anywhere. s must be a valid template (ParseTemplate).
func MisplacedDirectives(s string, d Dialect) []Misplaced {
	l := &sqlLexer{s: s, d: d}
	l.run()
	return l.out
}

// sqlLexer walks SQL template text. prevJoin says the last thing in code was part of a
// name or value (a word character, a dot, a directive), so a directive right after it
// is joined to it.
type sqlLexer struct {
	s        string
	d        Dialect
	i        int
	out      []Misplaced
	prevJoin bool
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= utf8.RuneSelf
}

// directiveAt returns the length of the directive starting at i (0 when none) and
// whether it binds; $${ escapes are skipped as 3 literal bytes by the caller.
func (l *sqlLexer) directiveAt(i int) (int, bool) {
	if !strings.HasPrefix(l.s[i:], "${") {
		return 0, false
	}
	end := strings.IndexByte(l.s[i:], '}')
	if end < 0 {
		return 0, false
	}
	d, err := parseDirective(l.s[i : i+end+1])
	return end + 1, err == nil && Binds(d.Kind)
}

func (l *sqlLexer) run() {
	for l.i < len(l.s) {
		s, i := l.s, l.i
		if strings.HasPrefix(s[i:], "$${") {
			l.i += 3
			l.prevJoin = false
			continue
		}
		if n, binds := l.directiveAt(i); n > 0 {
			if binds && (l.prevJoin || l.joinsNext(i+n)) {
				l.misplaced(i, n, "joined to a name or value", l.joinedText(i, n), "")
			}
			l.i += n
			l.prevJoin = true
			continue
		}
		c := s[i]
		switch {
		case c == '\'':
			l.quoted(i, "'", l.backslashes(i), true)
		case c == '"':
			l.quoted(i, `"`, l.d == DialectMySQL, l.d == DialectMySQL)
		case c == '`' && l.d != DialectPostgres:
			l.quoted(i, "`", false, false)
		case c == '[' && l.d == DialectSQLite:
			l.quotedUntil(i, "]")
		case strings.HasPrefix(s[i:], "--") || c == '#' && l.d == DialectMySQL:
			l.comment(i, "\n")
		case strings.HasPrefix(s[i:], "/*"):
			l.comment(i, "*/")
		case c == '$' && l.d == DialectPostgres && !l.prevJoin && l.dollarQuoted(i):
		default:
			l.prevJoin = isWordByte(c) || c == '.'
			l.i++
		}
	}
}

// joinsNext reports whether the byte at j continues a name or value.
func (l *sqlLexer) joinsNext(j int) bool {
	if j >= len(l.s) {
		return false
	}
	c := l.s[j]
	return isWordByte(c) || c == '.' || strings.HasPrefix(l.s[j:], "${") || c == '"' || c == '`'
}

// joinedText is the directive with the name characters around it.
func (l *sqlLexer) joinedText(i, n int) string {
	a, b := i, i+n
	for a > 0 && (isWordByte(l.s[a-1]) || l.s[a-1] == '.' || l.s[a-1] == '}') {
		a--
		if l.s[a] == '}' {
			if k := strings.LastIndex(l.s[:a], "${"); k >= 0 {
				a = k
			}
		}
	}
	for b < len(l.s) {
		if n, _ := l.directiveAt(b); n > 0 {
			b += n
			continue
		}
		if !isWordByte(l.s[b]) && l.s[b] != '.' {
			break
		}
		b++
	}
	return l.s[a:b]
}

// backslashes reports whether a '…' string starting at i takes backslash escapes:
// always in MySQL, in PostgreSQL only as E'…'.
func (l *sqlLexer) backslashes(i int) bool {
	switch l.d {
	case DialectMySQL:
		return true
	case DialectPostgres:
		return i > 0 && (l.s[i-1] == 'E' || l.s[i-1] == 'e') && (i == 1 || !isWordByte(l.s[i-2]))
	}
	return false
}

// quoted skips a string or quoted identifier opened by q at i (a doubled q stays inside),
// reporting each bind directive in it. isString says the quotes make a string value,
// which has an unquoted rewrite; an identifier has none.
func (l *sqlLexer) quoted(i int, q string, backslash, isString bool) {
	j := i + 1
	var found [][2]int
	for j < len(l.s) {
		switch {
		case backslash && l.s[j] == '\\':
			j += 2
			continue
		case strings.HasPrefix(l.s[j:], q+q):
			j += 2
			continue
		case strings.HasPrefix(l.s[j:], q):
		case strings.HasPrefix(l.s[j:], "$${"):
			j += 3
			continue
		default:
			if n, binds := l.directiveAt(j); n > 0 {
				if binds {
					found = append(found, [2]int{j, n})
				}
				j += n
			} else {
				j++
			}
			continue
		}
		break
	}
	end := min(j+1, len(l.s))
	l.report(i, end, q, found, isString)
	l.i, l.prevJoin = end, !isString
}

// quotedUntil skips a [bracketed] SQLite identifier.
func (l *sqlLexer) quotedUntil(i int, closer string) {
	end := len(l.s)
	if k := strings.Index(l.s[i+1:], closer); k >= 0 {
		end = i + 1 + k + len(closer)
	}
	l.report(i, end, "", l.bindsIn(i+1, end), false)
	l.i, l.prevJoin = end, true
}

// dollarQuoted skips a PostgreSQL $tag$…$tag$ string at i; false when i starts none
// (e.g. $1).
func (l *sqlLexer) dollarQuoted(i int) bool {
	k := i + 1
	for k < len(l.s) && l.s[k] != '$' {
		c := l.s[k]
		if !(isWordByte(c) && !(k == i+1 && c >= '0' && c <= '9')) {
			return false
		}
		k++
	}
	if k >= len(l.s) {
		return false
	}
	tag := l.s[i : k+1]
	end := len(l.s)
	if m := strings.Index(l.s[k+1:], tag); m >= 0 {
		end = k + 1 + m + len(tag)
	}
	l.report(i, end, tag, l.bindsIn(k+1, end), true)
	l.i, l.prevJoin = end, false
	return true
}

// comment skips a comment from i to closer (included), reporting directives in it.
func (l *sqlLexer) comment(i int, closer string) {
	end := len(l.s)
	if k := strings.Index(l.s[i+2:], closer); k >= 0 {
		end = i + 2 + k + len(closer)
	}
	for _, f := range l.bindsIn(i, end) {
		l.misplaced(f[0], f[1], "inside a comment, where it would never be sent", strings.TrimRight(l.s[i:end], "\n"), "")
	}
	l.i, l.prevJoin = end, false
}

// bindsIn lists the bind directives in s[a:b] as (offset, length).
func (l *sqlLexer) bindsIn(a, b int) [][2]int {
	var out [][2]int
	for j := a; j < b; {
		if strings.HasPrefix(l.s[j:], "$${") {
			j += 3
			continue
		}
		if n, binds := l.directiveAt(j); n > 0 {
			if binds {
				out = append(out, [2]int{j, n})
			}
			j += n
			continue
		}
		j++
	}
	return out
}

// report records the directives found in the quoted text s[a:b] opened by q.
func (l *sqlLexer) report(a, b int, q string, found [][2]int, isString bool) {
	for _, f := range found {
		where, fix := "inside a quoted identifier", ""
		if isString {
			where, fix = "inside quotes", l.unquoted(a, b, q, found)
		}
		l.misplaced(f[0], f[1], where, l.s[a:b], fix)
	}
}

// unquoted rewrites the string s[a:b] (opened and closed by q) so that its bind
// directives stand outside it: '${param.day}' becomes ${param.day}, and
// '%${param.q}%' becomes '%' || ${param.q} || '%' (CONCAT on MySQL).
func (l *sqlLexer) unquoted(a, b int, q string, found [][2]int) string {
	open := l.s[a : a+len(q)]
	if q == "'" && a > 0 && (l.s[a-1] == 'E' || l.s[a-1] == 'e') && l.d == DialectPostgres {
		open = l.s[a-1:a] + q
	}
	innerEnd := b
	if strings.HasSuffix(l.s[a:b], q) && b-a >= 2*len(q) {
		innerEnd = b - len(q)
	}
	var parts []string
	at := a + len(q)
	for _, f := range found {
		if f[0] > at {
			parts = append(parts, open+l.s[at:f[0]]+q)
		}
		parts = append(parts, l.s[f[0]:f[0]+f[1]])
		at = f[0] + f[1]
	}
	if innerEnd > at {
		parts = append(parts, open+l.s[at:innerEnd]+q)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	if l.d == DialectMySQL {
		return "CONCAT(" + strings.Join(parts, ", ") + ")"
	}
	return strings.Join(parts, " || ")
}

func (l *sqlLexer) misplaced(i, n int, where, written, fix string) {
	line, col := 1, 1
	for _, r := range l.s[:i] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	l.out = append(l.out, Misplaced{Directive: l.s[i : i+n], Line: line, Column: col, Where: where, Written: written, Fix: fix})
}
