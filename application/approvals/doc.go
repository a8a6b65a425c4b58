// Package approvals owns change requests (SPEC §9.5): a run request that waits until a
// second person approves it. Proposals records them (the runs funnel hands it every
// request under --require-approval run, and every propose_run); Service lists them and
// decides them. Approval submits the stored request through the same runs funnel, with
// trigger kind approval, so an approved run gets every check a direct one gets.
package approvals
