package pipeline

// Role says whether a connector block is the source or the sink.
type Role uint8

// Roles.
const (
	RoleSource Role = 1 << iota
	RoleSink
	RoleBoth = RoleSource | RoleSink
)

func (r Role) String() string {
	switch r {
	case RoleSource:
		return "source"
	case RoleSink:
		return "sink"
	}
	return "source/sink"
}

// FieldType is the type of one connector config key.
type FieldType string

// Field types; each maps onto a JSON Schema type.
const (
	FieldString  FieldType = "string"
	FieldInt     FieldType = "integer"
	FieldNumber  FieldType = "number"
	FieldBool    FieldType = "boolean"
	FieldStrings FieldType = "string[]" // a list of strings
	FieldObject  FieldType = "object"   // free-form map
	FieldList    FieldType = "array"    // free-form list
)

// FieldSpec declares one key of a connector's config.
type FieldSpec struct {
	Name        string
	Type        FieldType
	Role        Role // which block(s) accept the key; zero means both
	Required    bool
	Default     any
	Enum        []string
	Min         *int64 // integers only
	Description string
	// Secret marks values that must be redacted when a config is shown (passwords).
	Secret bool
	// SQL marks a string key holding SQL text of this dialect (a source's query): its
	// ${param.*}, ${now.*} and ${backfill.*} become bind parameters (SPEC §14.2), so its
	// resolved value is a Statement, not a string.
	SQL Dialect
}

// Spec is a connector's registration: its type name, what it can be and its config
// schema. The same Spec validates configs and renders the JSON Schema served at
// GET /v1/connectors, so the two can never disagree.
type Spec struct {
	Type        string
	Roles       Role
	Description string
	Fields      []FieldSpec
	// ExactlyOnce is set by sinks that can commit a page's rows and a watermark row in one
	// transaction (SPEC §1.7); delivery: exactly_once is refused for every other sink.
	ExactlyOnce bool
	// Shardable is set by sources that can narrow a read to one shard (SPEC §6.2).
	Shardable bool
	// KeyRanges is set by shardable sources that split by integer key ranges of
	// source.config.shard.key (the SQL sources); the others hash (files).
	KeyRanges bool
	// SingleObject is set by sinks that write one object (a file) which several writers
	// at once would clobber: a sharded run is refused with such a sink (SPEC §6.3).
	SingleObject bool
	// Check adds cross-field rules (e.g. key required for upsert). path is the dotted
	// path of the config block, for error messages. It sees the config after defaults.
	Check func(role Role, cfg map[string]any, path string) Errors
}

// Catalog finds connector specs by type; the connector registry implements it.
type Catalog interface {
	Spec(typ string) (Spec, bool)
	// Types lists the registered type names that can play role, sorted.
	Types(role Role) []string
}
