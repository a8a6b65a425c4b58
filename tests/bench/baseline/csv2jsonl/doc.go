// Command csv2jsonl is the benchmark baseline: the plainest Go program that turns a CSV
// file into JSONL with the standard library. Each row is decoded into a map[string]any
// keyed by the header — the generic shape a pipeline handles, since it does not know
// the columns in advance — and encoded with encoding/json through a bufio.Writer.
//
// Usage: csv2jsonl IN.csv OUT.jsonl
//
// Like sluice's file sink it syncs the output before exiting, so both sides pay for
// making the file durable and the comparison measures the conversion.
package main
