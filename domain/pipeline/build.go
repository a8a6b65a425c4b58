package pipeline

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/domain/naming"
)

// Limits of the top-level keys.
const (
	// Version is the only config format version this build reads.
	Version = 1
	// MaxShards is the largest shard.count (SPEC §6.1).
	MaxShards = 4096
)

var topKeys = []string{"version", "name", "pool", "shard", "delivery", "replication", "retry", "pipeline", "params"}

// Build validates a config tree and returns the Config. root must have its directives
// resolved already (leaves marked Deferred are accepted as they are). Every problem is
// reported, each with its path and position; the Config is nil when there is any.
func Build(root *Node, cat Catalog) (*Config, Errors) {
	c := &checker{root: root}
	if root == nil || root.Kind != KindMap {
		pos := Pos{}
		if root != nil {
			pos = root.Pos
		}
		c.add("", pos, "a config must be a map with version, name and pipeline")
		return nil, c.errs
	}
	cfg := &Config{Version: Version, ShardCount: 1, Delivery: AtLeastOnce, Replication: Replication{Type: Full}}
	top, _ := c.mapFields(root, "", topKeys)

	c.version(top["version"], cfg)
	if v, st := c.value(top["name"], "name", FieldString); st == absent {
		c.add("name", root.Pos, "required: the pipeline's name")
	} else if st == valid || st == deferred {
		cfg.Name = v.(string)
		if st == valid {
			c.name("name", "name", cfg.Name, top["name"].Pos)
		}
	}
	if v, st := c.value(top["pool"], "pool", FieldString); st == valid {
		cfg.Pool = v.(string)
		c.name("pool", "pool", cfg.Pool, top["pool"].Pos)
	} else if st == deferred {
		cfg.Pool = v.(string)
	}
	c.shard(top["shard"], cfg)
	if v, st := c.enum(top["delivery"], "delivery", string(AtLeastOnce), string(ExactlyOnce)); st == valid {
		cfg.Delivery = Delivery(v)
	}
	c.replication(top["replication"], cfg)
	c.retry(top["retry"], cfg)
	sink := c.pipelineBlock(top["pipeline"], cfg, cat)
	params, errs := ParseParams(top["params"])
	c.errs = append(c.errs, errs...)
	cfg.Params = params

	if cfg.Delivery == ExactlyOnce && sink != nil && !sink.ExactlyOnce {
		c.add("delivery", top["delivery"].Pos,
			"exactly_once needs a SQL sink that supports it (a transactional watermark); sink type %q does not — use delivery: at_least_once or such a sink", sink.Type)
	}
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return cfg, nil
}

func (c *checker) version(n *Node, cfg *Config) {
	v, st := c.value(n, "version", FieldInt)
	switch st {
	case absent:
		c.add("version", c.root.Pos, "required: write version: %d", Version)
	case valid:
		if v.(int64) != Version {
			c.add("version", n.Pos, "must be %d (this build reads config version %d only)", Version, Version)
		}
	}
}

// name checks a name-shaped value; what names it in the message.
func (c *checker) name(path, what, s string, pos Pos) {
	if err := naming.Check(what, s); err != nil {
		c.add(path, pos, "%s", err.Error())
	}
}

func (c *checker) enum(n *Node, path string, allowed ...string) (string, status) {
	v, st := c.value(n, path, FieldString)
	if st != valid {
		return "", st
	}
	s := v.(string)
	if contains(allowed, s) {
		return s, valid
	}
	c.add(path, n.Pos, "must be one of %s, not %q", strings.Join(allowed, ", "), s)
	return "", invalid
}

func (c *checker) shard(n *Node, cfg *Config) {
	if n == nil || n.Kind == KindNull {
		return
	}
	fields, ok := c.mapFields(n, "shard", []string{"count"})
	if !ok {
		return
	}
	v, st := c.value(fields["count"], "shard.count", FieldInt)
	switch st {
	case absent:
		c.add("shard.count", n.Pos, "required: the number of shards (1 = unsharded, at most %d)", MaxShards)
	case valid:
		count := v.(int64)
		if count < 1 || count > MaxShards {
			c.add("shard.count", fields["count"].Pos, "must be between 1 and %d (1 = unsharded)", MaxShards)
			return
		}
		cfg.ShardCount = int(count)
	}
}

func (c *checker) replication(n *Node, cfg *Config) {
	if n == nil || n.Kind == KindNull {
		return
	}
	fields, ok := c.mapFields(n, "replication", []string{"type", "cursor"})
	if !ok {
		return
	}
	typ, st := c.enum(fields["type"], "replication.type", string(Full), string(Incremental))
	if st == valid {
		cfg.Replication.Type = ReplicationType(typ)
	}
	cursor, cst := c.value(fields["cursor"], "replication.cursor", FieldString)
	if cst == valid || cst == deferred {
		cfg.Replication.Cursor = cursor.(string)
	}
	switch {
	case st == valid && cfg.Replication.Type == Incremental:
		if cst == absent || (cst == valid && strings.TrimSpace(cfg.Replication.Cursor) == "") {
			c.add("replication.cursor", n.Pos, "required when type is incremental: the column that orders new rows")
		}
	case st == absent || (st == valid && cfg.Replication.Type == Full):
		if cst != absent {
			c.add("replication.cursor", fields["cursor"].Pos, "only used with type: incremental")
		}
	}
}

// pipelineBlock fills Source, Sink and State and returns the sink's Spec when known.
func (c *checker) pipelineBlock(n *Node, cfg *Config, cat Catalog) *Spec {
	if n == nil || n.Kind == KindNull {
		c.add("pipeline", c.root.Pos, "required: a block with source and sink")
		return nil
	}
	fields, ok := c.mapFields(n, "pipeline", []string{"source", "sink", "state"})
	if !ok {
		return nil
	}
	cfg.Source, _ = c.connector(fields["source"], "pipeline.source", RoleSource, cat)
	var sinkSpec *Spec
	cfg.Sink, sinkSpec = c.connector(fields["sink"], "pipeline.sink", RoleSink, cat)
	c.state(fields["state"], cfg)
	return sinkSpec
}

func (c *checker) state(n *Node, cfg *Config) {
	if n == nil || n.Kind == KindNull {
		return
	}
	fields, ok := c.mapFields(n, "pipeline.state", []string{"type", "key", "config"})
	if !ok {
		return
	}
	typ, st := c.enum(fields["type"], "pipeline.state.type", string(StateHistory), string(StateLocal), string(StatePostgres))
	if st == valid {
		cfg.State.Type = StateType(typ)
	}
	if v, kst := c.value(fields["key"], "pipeline.state.key", FieldString); kst == valid {
		if strings.TrimSpace(v.(string)) == "" {
			c.add("pipeline.state.key", fields["key"].Pos, "must not be empty (omit it to use the default key)")
		} else {
			cfg.State.Key = v.(string)
		}
	} else if kst == deferred {
		cfg.State.Key = v.(string)
	}
	confNode := fields["config"]
	if cfg.State.Type != StatePostgres {
		if confNode != nil && confNode.Kind != KindNull && st == valid {
			c.add("pipeline.state.config", confNode.Pos, "only used with type: postgres")
		}
		return
	}
	conf, ok := c.mapFields(confNode, "pipeline.state.config", []string{"connection_url"})
	if !ok {
		return
	}
	v, ust := c.value(conf["connection_url"], "pipeline.state.config.connection_url", FieldString)
	switch ust {
	case absent:
		pos := n.Pos
		if confNode != nil {
			pos = confNode.Pos
		}
		c.add("pipeline.state.config.connection_url", pos, "required when type is postgres")
	case valid:
		url := v.(string)
		// Never echo the value: it holds credentials.
		if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
			c.add("pipeline.state.config.connection_url", conf["connection_url"].Pos, "must be a postgres:// or postgresql:// URL")
		}
		cfg.State.Config = map[string]any{"connection_url": url}
	case deferred:
		cfg.State.Config = map[string]any{"connection_url": v}
	}
}

// RunWarnings lists what `sluice run` and `sluice validate` ignore in c, one line each:
// they never shard, so shard: is ignored and the refusals a server would answer with
// (ShardRefusal, found through cat; nil skips them) are only warnings.
func RunWarnings(c *Config, cat Catalog) []string {
	var out []string
	if c != nil && c.ShardCount > 1 {
		out = append(out, fmt.Sprintf("shard: ignored by sluice run (count %d); the pipeline runs unsharded", c.ShardCount))
		if r := ShardRefusal(c, cat); r != nil {
			for _, why := range r.Reasons {
				out = append(out, "shard: a server would refuse this config: "+why)
			}
		}
	}
	return out
}
