package pipeline_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestJSONSchemaSink(t *testing.T) {
	t.Parallel()
	s := pipeline.JSONSchema(testCatalog()["db"], pipeline.RoleSink)
	got, err := json.Marshal(s)
	require.NoError(t, err)
	require.JSONEq(t, `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"title": "db sink",
		"description": "a SQL database",
		"type": "object",
		"additionalProperties": false,
		"required": ["connection_url", "table_name"],
		"properties": {
			"connection_url": {"type": "string", "description": "where", "writeOnly": true},
			"table_name": {"type": "string"},
			"write_mode": {"type": "string", "default": "append", "enum": ["append", "upsert", "delete", "overwrite"],
				"description": "append adds rows; upsert inserts or updates by key; delete removes rows by key; overwrite replaces all contents in one transaction."},
			"key": {"type": "array", "items": {"type": "string"}, "description": "Columns that identify a row; required for upsert and delete."},
			"create_table": {"type": "boolean", "default": false,
				"description": "Create the target when it is missing, with column types taken from the first page."}
		}
	}`, string(got))
}

func TestJSONSchemaSource(t *testing.T) {
	t.Parallel()
	s := pipeline.JSONSchema(testCatalog()["db"], pipeline.RoleSource)
	props := s["properties"].(map[string]any)
	require.ElementsMatch(t, []string{"connection_url", "query", "batch_size"}, keys(props))
	require.Equal(t, []string{"connection_url", "query"}, s["required"])
	bs := props["batch_size"].(map[string]any)
	require.Equal(t, "integer", bs["type"])
	require.Equal(t, int64(1), bs["minimum"])
	require.Equal(t, int64(pipeline.BatchSizeDefault), bs["default"])

	gen := pipeline.JSONSchema(testCatalog()["gen"], pipeline.RoleSource)
	gp := gen["properties"].(map[string]any)
	require.Equal(t, "number", gp["rate"].(map[string]any)["type"])
	require.Equal(t, "object", gp["extra"].(map[string]any)["type"])
	require.Equal(t, "array", gp["columns"].(map[string]any)["type"])
	_, hasDesc := gen["description"]
	require.False(t, hasDesc)
}

func keys(mp map[string]any) []string {
	out := make([]string, 0, len(mp))
	for k := range mp {
		out = append(out, k)
	}
	return out
}
