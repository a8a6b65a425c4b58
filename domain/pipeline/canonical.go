package pipeline

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
)

// CanonicalJSON encodes the tree as compact JSON with map keys sorted and scalars typed, so
// two texts that mean the same document (YAML or JSON, any key order, any quoting or
// comments) get the same bytes — the input of idempotency fingerprints (SPEC §2).
func (n *Node) CanonicalJSON() []byte {
	var b bytes.Buffer
	n.canonical(&b)
	return b.Bytes()
}

func (n *Node) canonical(b *bytes.Buffer) {
	if n == nil {
		b.WriteString("null")
		return
	}
	switch n.Kind {
	case KindNull:
		b.WriteString("null")
	case KindScalar:
		n.canonicalScalar(b)
	case KindList:
		b.WriteByte('[')
		for i, it := range n.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.canonical(b)
		}
		b.WriteByte(']')
	case KindMap:
		fields := append([]Field(nil), n.Fields...)
		sort.SliceStable(fields, func(i, j int) bool { return fields[i].Key < fields[j].Key })
		b.WriteByte('{')
		for i, f := range fields {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, f.Key)
			b.WriteByte(':')
			f.Value.canonical(b)
		}
		b.WriteByte('}')
	}
}

func (n *Node) canonicalScalar(b *bytes.Buffer) {
	switch n.Type {
	case TypeInt:
		if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			b.WriteString(strconv.FormatInt(v, 10))
			return
		}
	case TypeFloat:
		if v, err := strconv.ParseFloat(n.Value, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			return
		}
	case TypeBool:
		if v, err := strconv.ParseBool(n.Value); err == nil {
			b.WriteString(strconv.FormatBool(v))
			return
		}
	}
	// Strings, and any typed scalar whose text does not parse, stay text.
	writeString(b, n.Value)
}

// writeString quotes s without HTML escaping, which would make the bytes depend on an
// encoder setting rather than on the document.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // cannot fail for a string
	b.Truncate(b.Len() - 1)
}
