// Package jsonlines is the pass-through encoding of JSON objects, one per line: a source
// of JSON objects (JSONL files, Kafka messages) hands a sink that writes them as they are
// (JSONL files, Kafka values) its objects without decoding them into rows and encoding
// them again. Every object is still checked: one that is not a well-formed JSON object
// fails exactly as the decoded read fails, and one that is valid but cannot stand as a
// line as written (a line break between its tokens, invalid UTF-8) is decoded and encoded
// again by the caller's slow path, so a line is always one compact object.
package jsonlines
