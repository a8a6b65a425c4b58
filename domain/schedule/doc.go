// Package schedule owns the cron language of schedules and the instants it fires at (SPEC
// §9.1), plus the pure decisions a scheduler makes about due ticks (SPEC §9.2): which
// missed ticks become runs and which are recorded skipped, the overlap policy, the run key
// and run date of a tick, and where a schedule starts.
//
// Evaluation is our own, not robfig/cron's Next: that one skips or doubles ticks at
// daylight-saving transitions. Two rules apply, chosen by the hour field:
//
//   - a FIXED hour (numbers, ranges, lists — no `*`, no step) reads the expression as
//     wall-clock times: a wall time inside a spring-forward gap fires once, at the first
//     minute after the gap; a wall time that occurs twice at fall-back fires once, the
//     first time;
//   - an hour of `*` or a step reads it as real instants: minutes inside a gap do not
//     exist and do not fire, and both real instants of a repeated wall time fire, so
//     hourly work runs once per real hour.
//
// Nothing here reads a clock; callers pass `now`. Zone data is embedded (time/tzdata) so
// results do not depend on the host's zoneinfo.
package schedule
