// Package stdout is the `stdout` sink: every row as one JSON object per line (JSONL),
// keys in column order, to the process's standard output or an injected writer.
//
// A page is encoded completely before anything is written and then written with one
// Write call under the connector's lock, so a page that fails to encode leaves no partial
// output and concurrent runs never interleave inside a page. Each page is final once
// written (Durability PerPage); there is nothing to commit or roll back.
package stdout
