// Package generate is the `generate` source: count synthetic rows, the same for the same
// seed, for demos, tests and benchmarks.
//
// Every value of a row is a pure function of (seed, id), so a resumed incremental read
// (cursor `id`) yields exactly the rows a full read would have after the bookmark. With
// `rate`, pages are capped at about one second of rows and each page is held back until
// its rows are due, so a slow rate still shows steady progress.
package generate
