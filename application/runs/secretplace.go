package runs

import (
	"maps"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/secret"
)

// checkSecretPlacement refuses a request that puts a secret param where the run
// resource shows it in clear (SPEC §14.1): the config's name or pool using one (the
// domain rule), or a request field — name, labels, run_key, pool — holding a supplied
// secret value. The refusal names the field and the param, never the value.
func checkSecretPlacement(root *pipeline.Node, req SubmitRequest) error {
	if err := pipeline.CheckSecretPlacement(root); err != nil {
		return err
	}
	if len(req.Params) == 0 || root == nil {
		return nil
	}
	decl, errs := pipeline.ParseParams(root.Get("params"))
	if len(errs) > 0 {
		return nil // the load reported them
	}
	fields := map[string]string{"name": req.Name, "pool": req.Pool, "run_key": req.RunKey}
	for _, k := range slices.Sorted(maps.Keys(req.Labels)) {
		fields["labels."+k] = k + "=" + req.Labels[k]
	}
	for _, p := range decl {
		v, ok := req.Params[p.Name]
		if !ok || !p.Secret || len([]rune(v)) < secret.MinLen {
			continue // too short a secret is refused by materialize, naming the param
		}
		for _, path := range slices.Sorted(maps.Keys(fields)) {
			if strings.Contains(fields[path], v) {
				return &pipeline.SecretMisplacedError{Param: p.Name, Path: path}
			}
		}
	}
	return nil
}
