// Package storecontract is the contract suite of the run history: every behaviour the
// ports (runs.Store, cluster.Store, cluster.OutboxStore, execute.StateStore) promise,
// plus the store's own duties (migrations, the exclusive lock), run against each
// database the store supports. The store's tests call Run once per database with a
// Harness; a difference between databases is a Harness capability (Shared), never a
// skipped case.
package storecontract
