package pipeline

import "github.com/sluicehq/sluice/domain/run"

// Delivery is the write guarantee of a pipeline (SPEC §1.7).
type Delivery string

// Delivery guarantees.
const (
	AtLeastOnce Delivery = "at_least_once"
	ExactlyOnce Delivery = "exactly_once"
)

// ReplicationType selects full or incremental reads (SPEC §1.6).
type ReplicationType string

// Replication types.
const (
	Full        ReplicationType = "full"
	Incremental ReplicationType = "incremental"
)

// WriteMode is how a sink writes a page.
type WriteMode string

// Write modes shared by every sink that has a write_mode key.
const (
	Append    WriteMode = "append"
	Upsert    WriteMode = "upsert"
	Delete    WriteMode = "delete"
	Overwrite WriteMode = "overwrite"
)

// Config is a validated pipeline (SPEC §1.1). It is built from a Node whose directives
// are already resolved; see Build.
type Config struct {
	Version     int
	Name        string
	Pool        string // empty when the config names none
	ShardCount  int    // 1 when absent
	Delivery    Delivery
	Replication Replication
	Source      Connector
	Sink        Connector
	State       State
	Params      []Param
	Retry       *run.Retry // the run's retry policy (SPEC §14.5); nil: no retry
}

// Replication is the replication block.
type Replication struct {
	Type   ReplicationType
	Cursor string // incremental only
}

// Connector is a source or sink block: the connector type and its config with defaults
// applied and values coerced to the types of its Spec.
type Connector struct {
	Type   string
	Config map[string]any
}

// String returns a config value or "".
func (c Connector) String(key string) string {
	s, _ := c.Config[key].(string)
	return s
}

// Int returns an integer config value or def.
func (c Connector) Int(key string, def int64) int64 {
	switch v := c.Config[key].(type) {
	case int64:
		return v
	case int:
		return int64(v)
	case float64:
		return int64(v)
	}
	return def
}

// Bool returns a boolean config value or false.
func (c Connector) Bool(key string) bool {
	b, _ := c.Config[key].(bool)
	return b
}

// Strings returns a list-of-strings config value.
func (c Connector) Strings(key string) []string {
	switch v := c.Config[key].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// StateType says where bookmarks live.
type StateType string

// State stores. An empty type means the entry point's default (history for serve, the
// local state file for `sluice run`).
const (
	StateDefault  StateType = ""
	StateHistory  StateType = "history"
	StateLocal    StateType = "local"
	StatePostgres StateType = "postgres"
)

// State is the state block.
type State struct {
	Type   StateType
	Key    string // overrides the default state key
	Config map[string]any
}

// ParamType is the type of a template param (SPEC §8.1).
type ParamType string

// Param types.
const (
	ParamString ParamType = "string"
	ParamInt    ParamType = "int"
	ParamFloat  ParamType = "float"
	ParamBool   ParamType = "bool"
	// ParamDate is a calendar day, written YYYY-MM-DD; its value is a Date.
	ParamDate ParamType = "date"
	// ParamDatetime is an instant, written in RFC 3339; its value is a time.Time.
	ParamDatetime ParamType = "datetime"
)

// Param is one declared template param.
type Param struct {
	Name        string
	Type        ParamType
	Required    bool
	Default     any // nil when none
	Secret      bool
	Description string
	// The constraints of SPEC §14.2, checked on every value (supplied or default). Enum
	// holds values of the param's type; Min and Max are int64, float64, Date or
	// time.Time (nil when unset); MaxLength 0 means DefaultMaxLength for strings.
	Enum      []any
	Pattern   string // RE2, matched against the whole value
	Min, Max  any
	MaxLength int
}
