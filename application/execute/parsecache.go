package execute

import (
	"sync"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// Bounds of the decoded-config cache: a few dozen distinct configs cover a server whose
// runs come from templates, schedules and repeated submissions; a large config is decoded
// each time rather than kept.
const (
	parseCacheEntries = 64
	parseCacheMaxText = 32 << 10
)

// parseCache keeps decoded trees of recent config texts. A server decodes each run's
// config when it is submitted and again when it is executed, most often the same text
// run after run, and YAML decoding was the largest share of a busy server's CPU after
// the history's round trips. The stored trees are never handed out: callers get clones,
// so resolving directives or anything else a caller does to its tree cannot leak into
// another run. Errors are not cached. The zero value is ready to use.
type parseCache struct {
	mu    sync.Mutex
	trees map[string]*pipeline.Node
	order []string // insertion order, for eviction
}

// get returns a clone of the tree decoded from text, or nil.
func (c *parseCache) get(text []byte) *pipeline.Node {
	if len(text) > parseCacheMaxText {
		return nil
	}
	c.mu.Lock()
	tree := c.trees[string(text)]
	c.mu.Unlock()
	return tree.Clone()
}

// put keeps a clone of tree for text, evicting the oldest entry when full.
func (c *parseCache) put(text []byte, tree *pipeline.Node) {
	if len(text) > parseCacheMaxText || tree == nil {
		return
	}
	kept := tree.Clone()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.trees == nil {
		c.trees = make(map[string]*pipeline.Node, parseCacheEntries)
	}
	key := string(text)
	if _, ok := c.trees[key]; ok {
		return
	}
	if len(c.order) >= parseCacheEntries {
		delete(c.trees, c.order[0])
		c.order = c.order[1:]
	}
	c.trees[key] = kept
	c.order = append(c.order, key)
}
