package kafka

import (
	"context"
	"errors"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonlines"
	"github.com/sluicehq/sluice/adapters/connectors/internal/records"
	"github.com/sluicehq/sluice/application/execute"
)

// Encoding offers JSON lines for a full read of JSON values: each value is checked and
// passed on as it is, so a sink that writes JSON objects (a JSONL file) skips decoding
// and encoding every message. An incremental read keeps decoded pages (its bookmark
// rides on them), and raw values are not JSON objects.
func (s *source) Encoding() (execute.Encoding, bool) {
	if s.seq == nil || s.o.format != FormatJSON {
		return execute.Encoding{}, false
	}
	return execute.Encoding{Format: jsonlines.Format}, true
}

// UseEncoding switches to JSON-line pages; it is called before the first Next.
func (s *source) UseEncoding(context.Context) error {
	if _, ok := s.Encoding(); !ok {
		return errors.New("kafka: JSON lines are offered only for a full read of format json")
	}
	s.encoded = true
	s.lines = make([]byte, 0, 1<<20)
	return nil
}

// decodeLine is the slow path of a value that cannot pass as it is: decoded as the
// decoded read decodes it (so a value that is not an object fails with the same words)
// and encoded again as one line.
func decodeLine(dst, b []byte) ([]byte, error) {
	o, err := records.DecodeObject(b)
	if err != nil {
		return dst, err
	}
	out, err := jsonenc.AppendValue(dst, o)
	if err != nil {
		return dst, err
	}
	return append(out, '\n'), nil
}
