package run

import (
	"fmt"
	"slices"
	"strings"
)

// TriggerKind says what created a run (SPEC §2.9 trigger_kind).
type TriggerKind string

// The trigger kinds.
const (
	TriggerAPI      TriggerKind = "api"
	TriggerCLI      TriggerKind = "cli"
	TriggerMCP      TriggerKind = "mcp"
	TriggerTemplate TriggerKind = "template"
	TriggerTenant   TriggerKind = "tenant"
	TriggerFanout   TriggerKind = "fanout"
	TriggerSchedule TriggerKind = "schedule"
	TriggerBackfill TriggerKind = "backfill"
	TriggerRollback TriggerKind = "rollback"
	TriggerApproval TriggerKind = "approval"
)

var triggers = []TriggerKind{
	TriggerAPI, TriggerCLI, TriggerMCP, TriggerTemplate, TriggerTenant,
	TriggerFanout, TriggerSchedule, TriggerBackfill, TriggerRollback, TriggerApproval,
}

// TriggerKinds returns every trigger kind.
func TriggerKinds() []TriggerKind { return slices.Clone(triggers) }

// Valid reports whether k is a known trigger kind.
func (k TriggerKind) Valid() bool { return slices.Contains(triggers, k) }

// ParseTriggerKind reads a stored trigger kind or a filter value.
func ParseTriggerKind(s string) (TriggerKind, error) {
	k := TriggerKind(s)
	if !k.Valid() {
		names := make([]string, len(triggers))
		for i, v := range triggers {
			names[i] = string(v)
		}
		return "", fmt.Errorf("trigger_kind %q is not known: use one of %s", s, strings.Join(names, ", "))
	}
	return k, nil
}
