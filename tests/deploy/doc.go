// Package deploy checks the deploy kit under deploy/ (SPEC §14.6) without a container
// engine or a Kubernetes cluster: the Dockerfile is parsed and its `go build` line run to
// prove the binary works in a root without a tz database; the Helm chart's manifests, as
// `helm template` rendered them in CI, are checked for probes, disruption budgets, grace
// periods, pools and Secrets; the alert rules and the dashboard may only name metrics the
// server exports, and every alert has promtool tests.
package deploy
