// Package records turns JSON objects that arrive one by one (Kafka messages, the items of
// an HTTP API's answer) into pages: numbers become int64 when whole and float64 otherwise,
// nested objects and arrays stay maps and slices, and a page's columns are the union of
// its objects' keys, so objects that omit a key get nil there.
package records
