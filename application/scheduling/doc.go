// Package scheduling owns schedules on templates and their ticks (SPEC §9.2), the
// scheduler's leadership loop (SPEC §9.3) and backfills (SPEC §9.4).
//
// The cron language, the DST rules and the pure tick decisions (which due ticks become
// runs, which are recorded skipped) live in domain/schedule; this package applies them
// to stored schedules. Every run it creates goes through the template entry point and
// so through the one submit funnel; a tick's run is stored together with its tick row,
// in one transaction that also decides overlap and checks the leader's term.
package scheduling
