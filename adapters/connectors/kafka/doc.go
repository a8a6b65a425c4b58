// Package kafka is the kafka source and sink (SPEC §14.4), built on franz-go.
//
// The source reads a topic from per-partition offsets up to the offsets that were the end
// when the run started (`until: end`), so every run is finite; its bookmark is the next
// offset of every partition it reads. The sink produces JSON values with an idempotent
// producer; under `delivery: exactly_once` it writes each page in one Kafka transaction
// whose transactional.id is the run's state key, and records the exactly-once position in
// the same transaction as the committed offset metadata of a consumer group named after
// that key, so the position and the messages can never disagree and Kafka's producer
// epoch fences a stale writer. Every broker connection is dialed through the run's Reach.
//
// Security (security.go): `tls: true` wraps each dialed connection in TLS inside the
// connector's own dialer (franz-go refuses a custom Dialer together with its own TLS
// option, and the dialer must stay ours so the dial policy sees every connection);
// `sasl_mechanism` PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512 logs in with sasl_username and
// sasl_password (a ${secret:} value, redacted as a Secret field).
//
// A full read takes the partitions in order, fetching the next one ahead so the switch
// does not wait for a fetch (sequence.go). JSON values of a full read, and JSON lines
// into the sink, pass through without being decoded into rows when the other side writes
// JSON objects as they are (passthrough.go, package jsonlines).
package kafka
