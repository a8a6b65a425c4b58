// Package member owns what the cluster knows about each `sluice serve` process (SPEC
// §4.7, §4.10): its membership row, when it counts as live, which pools it serves
// (draining members serve none; members of a release without pools serve only the
// default pool), and the capability floors a rolling upgrade must respect.
package member
