// Package migrations embeds the history schema: postgres/NNNN_name.up.sql and
// sqlite/NNNN_name.up.sql with identical ids, applied by `sluice migrate up` and at
// serve start.
package migrations
