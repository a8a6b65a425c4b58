// Package templates owns registered pipelines (SPEC §8): versions, typed params, who may
// run them (tenants) and in which pools (pool_override), and the template, tenant and
// fan-out entry points — all of which submit through the one runs funnel.
package templates
