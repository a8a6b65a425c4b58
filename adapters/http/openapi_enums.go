package http

import "github.com/sluicehq/sluice/domain/run"

// enum is a string schema whose values are one of the domain's (or application's) own
// lists — run and shard statuses, trigger kinds, run error codes, change request statuses —
// so the published document cannot drift from what the server stores and answers.
func enum[T ~string](values []T) obj {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return obj{"type": "string", "enum": out}
}

// terminalStatuses are the run statuses a callback can be asked for: the end states.
func terminalStatuses() []run.Status {
	var out []run.Status
	for _, s := range run.Statuses() {
		if s.Terminal() {
			out = append(out, s)
		}
	}
	return out
}
