package pipeline

import (
	"errors"
	"fmt"
	"strings"
)

// ErrSecretParamMisplaced is wrapped by SecretMisplacedError (secret_param_misplaced,
// 422, SPEC §14.1). It does not wrap ErrInvalidConfig: the config is well formed, it
// puts a secret where the run resource would show it.
var ErrSecretParamMisplaced = errors.New("secret param misplaced")

// SecretMisplacedError: a secret param is used (or its value given) where the run
// resource, run lists, MCP answers and the history keep it in clear — the run's name,
// labels, run_key or pool. Sealing cannot cover those fields: they are how runs are
// found. The message never carries the value.
type SecretMisplacedError struct {
	Param string // the secret param
	Path  string // where it was used: name, pool, labels.K, run_key
}

func (e *SecretMisplacedError) Error() string {
	return fmt.Sprintf("%s: secret param %q may not be used in name, labels, run_key or pool "+
		"(they are shown in clear in the run resource); use a param without secret: true there, "+
		"or remove params.%s from %s", e.Path, e.Param, e.Param, e.Path)
}

// Unwrap makes errors.Is(err, ErrSecretParamMisplaced) true.
func (e *SecretMisplacedError) Unwrap() error { return ErrSecretParamMisplaced }

// placedKeys are the top-level config keys that become fields of the run resource.
var placedKeys = []string{"name", "pool"}

// CheckSecretPlacement refuses a config whose name or pool uses a secret param of its
// own params block (${param.X} with X secret). A params block that does not parse is
// left to the param validation, which names the problem better.
func CheckSecretPlacement(root *Node) error {
	if root == nil {
		return nil
	}
	decl, errs := ParseParams(root.Get("params"))
	if len(errs) > 0 {
		return nil
	}
	secret := map[string]bool{}
	for _, p := range decl {
		if p.Secret {
			secret[p.Name] = true
		}
	}
	if len(secret) == 0 {
		return nil
	}
	for _, key := range placedKeys {
		n := root.Get(key)
		if n == nil || n.Kind != KindScalar || !strings.Contains(n.Value, "${") {
			continue
		}
		tpl, err := ParseTemplate(n.Value)
		if err != nil {
			continue // a malformed directive is reported by the loader
		}
		for _, d := range tpl.Directives() {
			if d.Kind == DirectiveParam && secret[d.Arg] {
				return &SecretMisplacedError{Param: d.Arg, Path: key}
			}
		}
	}
	return nil
}
