// Package configtext decodes pipeline config text (YAML, and JSON as its flow subset) into
// the domain's document tree with positions, refusing what a config must not contain:
// duplicate keys, merge keys, custom tags, several documents.
package configtext
