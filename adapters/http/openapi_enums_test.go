package http_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// strs turns one of the domain's typed lists into the []any a decoded JSON enum is.
func strs[T ~string](values []T) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// TestEnumsAreTheDomainLists reads the served document and compares every closed list it
// publishes with the list the server itself uses, so a status, trigger kind or error code
// added to the domain cannot be missing from the API description (or the other way round).
func TestEnumsAreTheDomainLists(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t, newEnv(t))
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	prop := func(schema, name string) map[string]any {
		t.Helper()
		props := schemas[schema].(map[string]any)["properties"].(map[string]any)
		p, ok := props[name].(map[string]any)
		require.True(t, ok, "%s.%s", schema, name)
		return p
	}
	var terminal []run.Status
	for _, s := range run.Statuses() {
		if s.Terminal() {
			terminal = append(terminal, s)
		}
	}
	cases := []struct {
		where string
		got   any
		want  []any
	}{
		{"Run.status", prop("Run", "status")["enum"], strs(run.Statuses())},
		{"Run.trigger_kind", prop("Run", "trigger_kind")["enum"], strs(run.TriggerKinds())},
		{"RunError.code", prop("RunError", "code")["enum"], strs(run.Codes())},
		{"Shard.status", prop("Shard", "status")["enum"], strs(shard.Statuses())},
		{"ChangeRequest.status", prop("ChangeRequest", "status")["enum"], strs(approvals.Statuses())},
		{"ChangeRequest.trigger_kind", prop("ChangeRequest", "trigger_kind")["enum"], strs(run.TriggerKinds())},
		{"Callback.on", prop("Callback", "on")["items"].(map[string]any)["enum"], strs(terminal)},
	}
	for _, c := range cases {
		require.Equal(t, c.want, c.got, c.where)
	}
	summary := []string{"total"}
	for _, s := range shard.Statuses() {
		summary = append(summary, string(s))
	}
	require.ElementsMatch(t, summary, schemaProps(t, doc, "ShardSummary"), "ShardSummary has one count per shard status")
	for _, p := range doc["paths"].(map[string]any)["/v1/change-requests"].(map[string]any)["get"].(map[string]any)["parameters"].([]any) {
		if p.(map[string]any)["name"] == "status" {
			require.Equal(t, strs(approvals.Statuses()), p.(map[string]any)["schema"].(map[string]any)["enum"], "the change request status filter")
		}
	}
}
