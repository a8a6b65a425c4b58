package sqlspec

import (
	"fmt"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// OptionError names the config key whose value a sink refuses.
type OptionError struct{ Key, Msg string }

func (e *OptionError) Error() string { return "config key \"" + e.Key + "\": " + e.Msg }

// Descriptions are the connector-specific texts of the shared fields.
type Descriptions struct {
	URL, Table, Watermark string
}

// Fields lists connection_url, the source query fields, table_name, the sink's extra
// fields, watermark_table, the write fields and retry, in the order the connectors declare
// them.
func Fields(d Descriptions, extra ...pipeline.FieldSpec) []pipeline.FieldSpec {
	f := []pipeline.FieldSpec{
		{Name: "connection_url", Type: pipeline.FieldString, Required: true, Description: d.URL},
	}
	f = append(f, pipeline.SourceQueryFields()...)
	f = append(f, ShardField)
	f = append(f, pipeline.FieldSpec{Name: "table_name", Type: pipeline.FieldString, Role: pipeline.RoleSink, Required: true,
		Description: d.Table})
	f = append(f, extra...)
	f = append(f, pipeline.FieldSpec{Name: "watermark_table", Type: pipeline.FieldString, Role: pipeline.RoleSink, Default: watermark.DefaultTable,
		Description: d.Watermark})
	f = append(f, pipeline.SinkWriteFields()...)
	return append(f, retry.Field())
}

// Check reports a connection_url that checkURL refuses and, for a sink, the write-mode
// rules and whatever sinkOptions refuses. A missing key was already reported by
// CheckWriteMode in the shared wording, so it is not reported twice.
func Check(role pipeline.Role, c map[string]any, path string,
	checkURL func(string) error, sinkOptions func(map[string]any) *OptionError) pipeline.Errors {
	errs := retry.Check(c, path)
	if u, err := cfg.String(c, "connection_url", ""); err == nil && u != "" {
		if err := checkURL(u); err != nil {
			errs = append(errs, pipeline.FieldError{Path: pipeline.Join(path, "connection_url"), Message: err.Error()})
		}
	}
	if role != pipeline.RoleSink {
		return append(errs, checkShard(c, path)...)
	}
	errs = append(errs, pipeline.CheckWriteMode(c, path)...)
	if err := sinkOptions(c); err != nil && err.Key != pipeline.KeyKey {
		errs = append(errs, pipeline.FieldError{Path: pipeline.Join(path, err.Key), Message: err.Msg})
	}
	return errs
}

// Write is how a sink writes: the mode, the key columns and whether a missing table is
// created from the first page.
type Write struct {
	Mode   pipeline.WriteMode
	Key    []string
	Create bool
}

// WriteOf reads write_mode, key and create_table, refusing an unknown mode, an empty key
// item and a keyed mode without key.
func WriteOf(c map[string]any) (Write, *OptionError) {
	var w Write
	var err error
	if w.Mode, err = cfg.WriteModeOf(c); err != nil {
		return w, &OptionError{"write_mode", err.Error()}
	}
	switch w.Mode {
	case pipeline.Append, pipeline.Upsert, pipeline.Delete, pipeline.Overwrite:
	default:
		return w, &OptionError{"write_mode", fmt.Sprintf("unknown write_mode %q; use append, upsert, delete or overwrite", w.Mode)}
	}
	if w.Key, err = cfg.Strings(c, "key"); err != nil {
		return w, &OptionError{"key", err.Error()}
	}
	for i, k := range w.Key {
		if k == "" {
			return w, &OptionError{"key", fmt.Sprintf("item %d is empty", i)}
		}
	}
	if len(w.Key) == 0 && (w.Mode == pipeline.Upsert || w.Mode == pipeline.Delete) {
		return w, &OptionError{"key", fmt.Sprintf("write_mode %s needs key: the columns that identify a row, e.g. key: [id]", w.Mode)}
	}
	if w.Create, err = cfg.Bool(c, "create_table", false); err != nil {
		return w, &OptionError{"create_table", err.Error()}
	}
	return w, nil
}

// String reads a string key, naming the key when its value is not a string.
func String(c map[string]any, key, def string) (string, *OptionError) {
	s, err := cfg.String(c, key, def)
	if err != nil {
		return "", &OptionError{key, err.Error()}
	}
	return s, nil
}

// Spec declares a SQL connector: both roles, exactly-once capable as a sink, shardable
// by key ranges as a source. Its query is SQL of the dialect named like the connector
// type, so params in it become bind parameters (SPEC §14.2).
func Spec(typ, description string, fields []pipeline.FieldSpec, check func(pipeline.Role, map[string]any, string) pipeline.Errors) pipeline.Spec {
	fields = append([]pipeline.FieldSpec(nil), fields...)
	for i := range fields {
		if fields[i].Name == pipeline.KeyQuery {
			fields[i].SQL = pipeline.Dialect(typ)
		}
	}
	return pipeline.Spec{
		Type:        typ,
		Roles:       pipeline.RoleBoth,
		Description: description,
		Fields:      fields,
		ExactlyOnce: true,
		Shardable:   true,
		KeyRanges:   true,
		Check:       check,
	}
}

// Table reads the table name under key (def when unset) and parses it, naming key when
// either fails.
func Table[T any](c map[string]any, key, def string, parse func(string) (T, error)) (T, *OptionError) {
	var t T
	s, oerr := String(c, key, def)
	if oerr != nil {
		return t, oerr
	}
	t, err := parse(s)
	if err != nil {
		return t, &OptionError{Key: key, Msg: err.Error()}
	}
	return t, nil
}

// Qualified renders an optionally schema-qualified name, each part through quote (as
// written when quote is nil).
func Qualified(schema, name string, quote func(string) string) string {
	if quote == nil {
		quote = func(s string) string { return s }
	}
	if schema != "" {
		return quote(schema) + "." + quote(name)
	}
	return quote(name)
}
