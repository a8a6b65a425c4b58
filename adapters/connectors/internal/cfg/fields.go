package cfg

import "github.com/sluicehq/sluice/domain/pipeline"

// Field returns the field called name from fields (the shared field sets of
// domain/pipeline), so a connector can take one shared key without the others. It
// panics when the name is missing: a programming error caught by any test.
func Field(fields []pipeline.FieldSpec, name string) pipeline.FieldSpec {
	for _, f := range fields {
		if f.Name == name {
			return f
		}
	}
	panic("cfg: no shared field " + name)
}

// BatchSizeField is the shared source key batch_size.
func BatchSizeField() pipeline.FieldSpec {
	return Field(pipeline.SourceQueryFields(), pipeline.KeyBatchSize)
}

// WriteModeOf reads write_mode (default append).
func WriteModeOf(c map[string]any) (pipeline.WriteMode, error) {
	s, err := String(c, pipeline.KeyWriteMode, string(pipeline.Append))
	return pipeline.WriteMode(s), err
}
