// Package execute moves pages from a source to a sink (SPEC §1.3): bookmarks are saved only
// after the sink confirms a page, cancellation and timeouts take effect at page boundaries,
// memory is bounded by a fixed number of pages in flight. It also loads configs: decoding,
// resolving directives with this process's environment, and validation.
package execute
