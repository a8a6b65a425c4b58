package pipeline

import "strings"

// Dialect is the SQL flavour of a connector's query field. It says where strings, quoted
// identifiers and comments are, so a directive's place in the text can be judged.
type Dialect string

// The SQL dialects of this version's connectors.
const (
	DialectPostgres Dialect = "postgres"
	DialectMySQL    Dialect = "mysql"
	DialectSQLite   Dialect = "sqlite"
)

// Binds reports whether a directive of kind k is data that a SQL query receives as a bind
// parameter (SPEC §14.2). env, secret and file directives are the operator's own text
// and stay part of the query.
func Binds(k DirectiveKind) bool {
	return k == DirectiveParam || k == DirectiveNow || k == DirectiveBackfill
}

// Statement is SQL text whose values travel beside it as bind parameters: Args[i] stands
// between Text[i] and Text[i+1], so len(Text) == len(Args)+1. A value is never part of the
// text; each connector renders the placeholders of its driver. Args are string, int64,
// float64, bool, Date or time.Time.
type Statement struct {
	Text []string
	Args []any
}

// NewStatement is text without bind parameters.
func NewStatement(text string) Statement { return Statement{Text: []string{text}} }

// Render writes the text with placeholder(i) where Args[i] goes.
func (s Statement) Render(placeholder func(i int) string) string {
	var b strings.Builder
	for i, t := range s.Text {
		if i > 0 {
			b.WriteString(placeholder(i - 1))
		}
		b.WriteString(t)
	}
	return b.String()
}

// Wrap puts prefix before and suffix after the text; the arguments keep their order.
func (s Statement) Wrap(prefix, suffix string) Statement {
	text := append([]string(nil), s.Text...)
	if len(text) == 0 {
		text = []string{""}
	}
	text[0] = prefix + text[0]
	text[len(text)-1] += suffix
	return Statement{Text: text, Args: s.Args}
}

// Trim drops leading space and trailing space and semicolons from the whole text (a
// query is wrapped as a subquery, where a semicolon would end it early).
func (s Statement) Trim() Statement {
	text := append([]string(nil), s.Text...)
	if len(text) == 0 {
		return NewStatement("")
	}
	text[0] = strings.TrimLeft(text[0], " \t\r\n")
	text[len(text)-1] = strings.TrimRight(text[len(text)-1], "; \t\r\n")
	return Statement{Text: text, Args: s.Args}
}
