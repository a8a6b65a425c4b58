package sqlspec

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/shard"
)

// SQL sources shard by integer key ranges (SPEC §6.2): the coordinator reads MIN and MAX
// of source.config.shard.key over the query's rows and splits [MIN, MAX] into ranges;
// each shard reads the query wrapped in a filter on its range (shard 0 also takes the NULL
// keys), so the ranges cover every row exactly once.

// ShardField declares source.config.shard.
var ShardField = pipeline.FieldSpec{Name: "shard", Type: pipeline.FieldObject, Role: pipeline.RoleSource,
	Description: "With shard: {count: N} at the top level, {key: COL} names the integer column of the query " +
		"whose [MIN, MAX] is split into N key ranges, one per shard (NULL keys go to the first)."}

// ShardKey reads source.config.shard.key: "" when the config has no shard block.
func ShardKey(c map[string]any) (string, error) {
	raw, ok := c["shard"]
	if !ok || raw == nil {
		return "", nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return "", errors.New("config key \"shard\" must be a map: shard: {key: COLUMN}")
	}
	for k := range m {
		if k != "key" {
			return "", fmt.Errorf("config key \"shard.%s\" is unknown (known keys: key)", k)
		}
	}
	key, ok := m["key"].(string)
	if !ok || strings.TrimSpace(key) == "" {
		return "", errors.New("config key \"shard.key\" must name the integer column to split the read by")
	}
	return key, nil
}

// checkShard reports a malformed shard block of a source, and a shard key on a query with
// a top-level LIMIT (each shard would apply the limit to its own range).
func checkShard(c map[string]any, path string) pipeline.Errors {
	key, err := ShardKey(c)
	if err != nil {
		return pipeline.Errors{{Path: pipeline.Join(path, "shard"), Message: err.Error()}}
	}
	if key == "" {
		return nil
	}
	if q, err := Query(c); err == nil && HasTopLevelLimit(Text(q)) {
		return pipeline.Errors{{Path: pipeline.Join(path, "query"), Message: "a query with a top-level LIMIT cannot be " +
			"sharded (each shard would apply the limit to its own key range); remove the LIMIT or the shard block"}}
	}
	return nil
}

// ShardRead is the connection_url, the key and the query of a key-range plan, refused with execute.ErrShardKey
// when the config names no key and with a plain error for a query with a top-level LIMIT.
func ShardRead(c map[string]any) (url, key string, query pipeline.Statement, err error) {
	if url, err = cfg.String(c, "connection_url", ""); err != nil {
		return "", "", query, err
	}
	if key, err = ShardKey(c); err != nil {
		return "", "", query, fmt.Errorf("%w: %w", execute.ErrShardKey, err)
	}
	if key == "" {
		return "", "", query, fmt.Errorf("%w: source.config.shard.key is not set: name the integer column of the query "+
			"to split the read by, e.g. shard: {key: id}", execute.ErrShardKey)
	}
	if query, err = Query(c); err != nil {
		return "", "", query, err
	}
	if HasTopLevelLimit(Text(query)) {
		return "", "", query, errors.New("a query with a top-level LIMIT cannot be sharded; remove the LIMIT or shard: {count}")
	}
	return url, key, query, nil
}

// Text renders a statement for inspection only (never to run): each bind parameter as ?.
func Text(s pipeline.Statement) string {
	return s.Render(func(int) string { return "?" })
}

// KeyPlan turns the key bounds of a read into a plan of at most n shards: no key at all
// (an empty table, or NULL keys only) plans the one shard that reads everything.
func KeyPlan(lo, hi int64, found bool, n int) []execute.ShardSlice {
	ranges := shard.PlanEmpty()
	if found {
		ranges = shard.PlanRanges(lo, hi, n)
	}
	out := make([]execute.ShardSlice, len(ranges))
	for i, r := range ranges {
		r := r
		keys := uint64(r.Hi) - uint64(r.Lo) // keys-1; the full range does not fit int64
		w := int64(math.MaxInt64)
		if keys < math.MaxInt64 {
			w = int64(keys) + 1
		}
		out[i] = execute.ShardSlice{Index: i, Count: len(ranges), Range: &r, Weight: w}
	}
	return out
}

// Narrow wraps query so it returns only the rows of req's shard; without a shard it is
// the query unchanged. quote makes the key an identifier of the dialect. The bounds are
// integers the planner computed, written into the text, so the query's own bind
// parameters keep their order.
func Narrow(query pipeline.Statement, c map[string]any, sh *execute.ShardSlice, quote func(string) string) (pipeline.Statement, error) {
	if sh == nil {
		return query, nil
	}
	if sh.Range == nil {
		return query, errors.New("a SQL source is split by key ranges; this shard has none")
	}
	key, err := ShardKey(c)
	if err == nil && key == "" {
		err = errors.New("source.config.shard.key is not set")
	}
	if err != nil {
		return query, err
	}
	k := "q." + quote(key)
	cond := k + " BETWEEN " + strconv.FormatInt(sh.Range.Lo, 10) + " AND " + strconv.FormatInt(sh.Range.Hi, 10)
	if sh.Range.Nulls {
		cond = "(" + cond + " OR " + k + " IS NULL)"
	}
	return query.Wrap("SELECT * FROM (\n", "\n) AS q WHERE "+cond), nil
}

// KeyIsNotAColumn is the planning error of a shard key the query does not return.
func KeyIsNotAColumn(key string, cols []string) error {
	return fmt.Errorf("%w: source.config.shard.key %q is not a column of the query (columns: %s)",
		execute.ErrShardKey, key, strings.Join(cols, ", "))
}

// KeyIsNotAnInteger is the planning error of a shard key of another type.
func KeyIsNotAnInteger(key, typ string) error {
	return fmt.Errorf("%w: source.config.shard.key %q is a %s column; key ranges need an integer column "+
		"(name another column, or cast it in the query)", execute.ErrShardKey, key, typ)
}

// HasTopLevelLimit reports whether query has a LIMIT (or FETCH FIRST) outside parentheses,
// string literals, quoted identifiers and comments.
func HasTopLevelLimit(query string) bool {
	depth := 0
	var word strings.Builder
	words := []string{}
	flush := func() {
		if word.Len() > 0 && depth == 0 {
			words = append(words, strings.ToUpper(word.String()))
		}
		word.Reset()
	}
	for i := 0; i < len(query); i++ {
		ch := query[i]
		switch {
		case ch == '\'' || ch == '"' || ch == '`':
			flush()
			j := strings.IndexByte(query[i+1:], ch)
			if j < 0 {
				return false
			}
			i += j + 1
		case ch == '-' && i+1 < len(query) && query[i+1] == '-':
			flush()
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				i = len(query)
			} else {
				i += j
			}
		case ch == '/' && i+1 < len(query) && query[i+1] == '*':
			flush()
			j := strings.Index(query[i+2:], "*/")
			if j < 0 {
				return false
			}
			i += j + 3
		case ch == '(':
			flush()
			depth++
		case ch == ')':
			flush()
			depth--
		case ch == '_' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			word.WriteByte(ch)
		default:
			flush()
		}
	}
	flush()
	for i, w := range words {
		if w == "LIMIT" || w == "FETCH" && i+1 < len(words) && (words[i+1] == "FIRST" || words[i+1] == "NEXT") {
			return true
		}
	}
	return false
}
