package postgres

import (
	"errors"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
)

// tableName is an optionally schema-qualified table, kept exactly as written.
type tableName struct{ schema, name string }

// parseTable splits "schema.table"; each part may be double-quoted ("my.schema"."t") to
// hold dots or quotes.
func parseTable(s string) (tableName, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return tableName{}, errors.New("a table name is required")
	}
	parts, err := splitIdents(s)
	if err != nil {
		return tableName{}, err
	}
	switch len(parts) {
	case 1:
		return tableName{name: parts[0]}, nil
	case 2:
		return tableName{schema: parts[0], name: parts[1]}, nil
	}
	return tableName{}, errors.New("must be table or schema.table")
}

func splitIdents(s string) ([]string, error) {
	var parts []string
	for len(s) > 0 {
		var part string
		if s[0] == '"' {
			var b strings.Builder
			i := 1
			for ; i < len(s); i++ {
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						b.WriteByte('"')
						i++
						continue
					}
					break
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("has an unterminated quoted name")
			}
			part, s = b.String(), s[i+1:]
		} else {
			i := strings.IndexByte(s, '.')
			if i < 0 {
				i = len(s)
			}
			part, s = s[:i], s[i:]
		}
		if part == "" {
			return nil, errors.New("has an empty name part")
		}
		parts = append(parts, part)
		if len(s) > 0 {
			if s[0] != '.' || len(s) == 1 {
				return nil, errors.New("must be table or schema.table")
			}
			s = s[1:]
		}
	}
	return parts, nil
}

func (t tableName) String() string { return sqlspec.Qualified(t.schema, t.name, nil) }

func (t tableName) quoted() string { return sqlspec.Qualified(t.schema, t.name, quote) }

// quote makes s an SQL identifier, whatever it contains.
func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func quoteAll(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quote(c)
	}
	return strings.Join(q, ", ")
}
