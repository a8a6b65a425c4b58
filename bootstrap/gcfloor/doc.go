// Package gcfloor keeps the Go garbage collector's heap goal from falling below a floor.
//
// Go sets the next heap goal to the live heap plus GOGC percent of it. A server whose live
// heap is a few MiB but which allocates tens of KiB per request or run therefore collects
// every few MiB allocated, many times a second, each cycle with its fixed costs (stacks,
// globals, sweeping). In a burn-down of trivial runs a member at Go's default pacing
// collected about three times as often as with a 64 MiB floor and spent about 30 % more
// CPU per run. A process whose live heap is past half the floor is paced exactly as GOGC
// says. The floor is a goal, not a limit: GOMEMLIMIT, when set, still wins.
package gcfloor
