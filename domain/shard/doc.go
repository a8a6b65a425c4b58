// Package shard owns the rules for splitting one run into shards (SPEC §6): the shard
// lifecycle table, the shard count bounds, key-range planning over [MIN, MAX] (overflow
// safe at the int64 edges), hash buckets for file paths, and the rule that decides how a
// sharded parent ends once its shards have.
package shard
