package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// secretKeys are the config keys whose values Config hides (SPEC §14.3): a key named one
// of them, in any case, or ending in one after an underscore (db_password,
// secret_access_key). A key merely containing "key" is not one of them: `key: [id]` of
// an upsert sink is a column list, and hiding it made the view useless for editing.
var secretKeys = []string{"password", "passwd", "secret", "token", "api_key", "access_key", "secret_key", "private_key"}

func sensitiveKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range secretKeys {
		if k == w || strings.HasSuffix(k, "_"+w) {
			return true
		}
	}
	return false
}

// Config returns a run's stored config for people to read (operator or admin; never a
// tenant principal). The redaction works on the parsed tree, not on the text, so no
// quoting or flow style can hide a value from it: every scalar under a key named like
// one of secretKeys becomes "***", URL userinfo becomes "***" in every
// string, and values registered as secrets are masked. Directives stay as written
// (${env:PG_URL}, ${sealed:1}); they name a secret without holding it.
//
// The answer is JSON in the document's key order, indented by two spaces: valid YAML as
// well, so it can be edited and submitted again (a rollback with a config).
func (s *Service) Config(ctx context.Context, p Principal, id string) (string, error) {
	if err := need(p, Operator, "read run configs"); err != nil {
		return "", err
	}
	rec, err := s.lookup(ctx, p, id)
	if err != nil {
		return "", err
	}
	text, err := s.openConfig(ctx, rec)
	if err != nil {
		return "", err
	}
	tree, err := s.deps.Loader.Parse([]byte(text))
	if err != nil {
		// Stored configs were parsed at submit; one that no longer parses is not shown
		// raw, since it could not be redacted.
		return "", fmt.Errorf("stored config of run %s does not parse: %w", id, err)
	}
	tree = tree.Clone()
	s.redactTree(tree, false)
	var b bytes.Buffer
	writeNode(&b, tree, "")
	b.WriteByte('\n')
	return b.String(), nil
}

// redactTree hides in place what Config must not show; hide is set below a sensitive key.
func (s *Service) redactTree(n *pipeline.Node, hide bool) {
	if n == nil {
		return
	}
	switch n.Kind {
	case pipeline.KindScalar:
		// A boolean holds no secret: `secret: true` declares a secret param, it is not one.
		if hide && n.Type != pipeline.TypeBool {
			n.Value, n.Type = redacted, pipeline.TypeString
			return
		}
		if n.Type == pipeline.TypeString {
			n.Value = s.redactString(n.Value)
		}
	case pipeline.KindMap:
		for i := range n.Fields {
			s.redactTree(n.Fields[i].Value, hide || sensitiveKey(n.Fields[i].Key))
		}
	case pipeline.KindList:
		for _, it := range n.Items {
			s.redactTree(it, hide)
		}
	}
}

// writeNode writes the tree as indented JSON, keeping the document's key order (which
// encoding/json of a map would sort away).
func writeNode(b *bytes.Buffer, n *pipeline.Node, indent string) {
	if n == nil {
		b.WriteString("null")
		return
	}
	inner := indent + "  "
	switch n.Kind {
	case pipeline.KindScalar:
		writeScalar(b, n)
	case pipeline.KindMap:
		if len(n.Fields) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, f := range n.Fields {
			b.WriteString(inner)
			writeJSONString(b, f.Key)
			b.WriteString(": ")
			writeNode(b, f.Value, inner)
			if i < len(n.Fields)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case pipeline.KindList:
		if len(n.Items) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, it := range n.Items {
			b.WriteString(inner)
			writeNode(b, it, inner)
			if i < len(n.Items)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	default:
		b.WriteString("null")
	}
}

func writeScalar(b *bytes.Buffer, n *pipeline.Node) {
	switch n.Type {
	case pipeline.TypeInt:
		if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			b.WriteString(strconv.FormatInt(v, 10))
			return
		}
	case pipeline.TypeFloat:
		if v, err := strconv.ParseFloat(n.Value, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			return
		}
	case pipeline.TypeBool:
		if v, err := strconv.ParseBool(n.Value); err == nil {
			b.WriteString(strconv.FormatBool(v))
			return
		}
	}
	writeJSONString(b, n.Value)
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}
