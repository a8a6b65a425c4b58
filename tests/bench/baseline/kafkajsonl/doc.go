// Command kafkajsonl is the kafka suite's baseline: what the raw franz-go client does
// without sluice. `consume BROKER TOPIC OUT.jsonl` reads every message of TOPIC up to the
// end offsets seen at start and writes each value as one JSONL line; `produce BROKER
// TOPIC IN.jsonl` sends each line as one message (idempotent producer, acks from all
// replicas) and waits for every acknowledgement.
package main
