package mcp

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/domain/run"
)

// runStatus and changeStatus are string arguments with a closed set of values. Their
// schemas carry the set as an enum (from the domain's own lists), so an agent reads the
// allowed values from the schema, not from prose.
type (
	runStatus    string
	changeStatus string
)

func enumSchemas() map[reflect.Type]*jsonschema.Schema {
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[runStatus]():    {Type: "string", Enum: values(run.Statuses())},
		reflect.TypeFor[changeStatus](): {Type: "string", Enum: values(approvals.Statuses())},
	}
}

func values[T ~string](list []T) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = string(v)
	}
	return out
}

// addTool registers a typed tool with its input schema built here (enums included); the
// SDK infers the output schema.
func addTool[In, Out any](srv *sdk.Server, tool *sdk.Tool, h sdk.ToolHandlerFor[In, Out]) {
	schema, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: enumSchemas()})
	if err != nil {
		panic("mcp: the input schema of " + tool.Name + ": " + err.Error()) // a programming error, caught by every test
	}
	tool.InputSchema = schema
	sdk.AddTool(srv, tool, h)
}

// Annotations every tool carries (MCP tool hints): what an agent may assume about a call.
func readOnly() *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
}

// writes is a tool that changes something. destructive: it may overwrite or stop what
// exists (a run's sink writes, a cancel); idempotent: calling it again with the same
// arguments changes nothing more; openWorld: it reaches systems beyond sluice.
func writes(destructive, idempotent, openWorld bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{DestructiveHint: ptr(destructive), IdempotentHint: idempotent, OpenWorldHint: ptr(openWorld)}
}

func ptr[T any](v T) *T { return &v }
