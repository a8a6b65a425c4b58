package pipeline

// BatchSizeDefault is the page size of a source that does not set batch_size (SPEC §1.3).
const BatchSizeDefault = 10000

// The key names shared by every connector (SPEC §1.4), so no connector spells them its own way.
const (
	KeyQuery       = "query"
	KeyBatchSize   = "batch_size"
	KeyWriteMode   = "write_mode"
	KeyKey         = "key"
	KeyCreateTable = "create_table"
)

// SourceQueryFields are the source keys of every query-based connector: query and batch_size.
func SourceQueryFields() []FieldSpec {
	one := int64(1)
	return []FieldSpec{
		{Name: KeyQuery, Type: FieldString, Role: RoleSource, Required: true,
			Description: "The SELECT statement whose rows are read. ${param.X}, ${now.*} and ${backfill.*} in it are " +
				"sent as bind parameters, never pasted into the text: write them unquoted where a value may stand " +
				"(day = ${param.day}, not '${param.day}')."},
		{Name: KeyBatchSize, Type: FieldInt, Role: RoleSource, Default: int64(BatchSizeDefault), Min: &one,
			Description: "Rows per page; a bookmark is saved after each confirmed page."},
	}
}

// SinkWriteFields are the write keys every sink shares: write_mode, key and create_table.
// Pair them with CheckWriteMode in the Spec's Check.
func SinkWriteFields() []FieldSpec {
	return []FieldSpec{
		{Name: KeyWriteMode, Type: FieldString, Role: RoleSink, Default: string(Append),
			Enum:        []string{string(Append), string(Upsert), string(Delete), string(Overwrite)},
			Description: "append adds rows; upsert inserts or updates by key; delete removes rows by key; overwrite replaces all contents in one transaction."},
		{Name: KeyKey, Type: FieldStrings, Role: RoleSink,
			Description: "Columns that identify a row; required for upsert and delete."},
		{Name: KeyCreateTable, Type: FieldBool, Role: RoleSink, Default: false,
			Description: "Create the target when it is missing, with column types taken from the first page."},
	}
}

// CheckWriteMode is the cross-field rule of SinkWriteFields: upsert and delete need a key.
// path is the config block's path; cfg has defaults applied.
func CheckWriteMode(cfg map[string]any, path string) Errors {
	mode, _ := cfg[KeyWriteMode].(string)
	if mode != string(Upsert) && mode != string(Delete) {
		return nil
	}
	if len(Connector{Config: cfg}.Strings(KeyKey)) > 0 {
		return nil
	}
	return Errors{{Path: Join(path, KeyKey), Message: "required when write_mode is " + mode}}
}
