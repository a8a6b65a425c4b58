package bootstrap

import (
	"github.com/spf13/pflag"
	"log/slog"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/adapters/vault"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
)

// vaultFlags are --vault-key and --vault-previous-key (SPEC §7.1).
type vaultFlags struct {
	key      string
	previous []string
}

func (v *vaultFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&v.key, "vault-key", "", "base64 AES-256 key sealing configs and secret params in the history; every member needs the same one (sluice keygen prints one; default: none, configs stored as submitted)")
	fs.StringSliceVar(&v.previous, "vault-previous-key", nil, "earlier vault key still opened but never used to seal, for rotation (repeatable) [$SLUICE_VAULT_PREVIOUS_KEYS]")
	_ = fs.SetAnnotation("vault-previous-key", cli.AnnotationEnvAlias, []string{"SLUICE_VAULT_PREVIOUS_KEYS"})
}

// open builds the vault; nil without --vault-key. The error names the flag, never a key.
func (v *vaultFlags) open() (*vault.Vault, error) {
	if v.key == "" {
		return nil, nil
	}
	return vault.FromBase64(v.key, clean(v.previous)...)
}

// runsSealer is the service's sealer: nil without a key, so secret params are refused
// (a nil *vault.Vault must not become a non-nil interface).
func runsSealer(s *serveSettings) runs.Sealer {
	if s.Vault == nil {
		return nil
	}
	return s.Vault
}

// memberSealer is the member's: without a key it still names the key a sealed run needs.
func memberSealer(s *serveSettings) runs.Sealer {
	if s.Vault == nil {
		return vault.Keyless{}
	}
	return s.Vault
}

// vaultFormatMax is what the member advertises (§4.10): 0 without a key.
func vaultFormatMax(s *serveSettings) int {
	if s.Vault == nil {
		return 0
	}
	return s.Vault.FormatMax()
}

// withVault adds the vault ports to the member's deps.
func withVault(s *serveSettings, st *store.Store, d cluster.Deps) cluster.Deps {
	d.Sealer, d.Secrets = memberSealer(s), st
	// Callback settings are sealed with a key: the builder opens them in the transition.
	d.Callbacks = runs.CallbackBuilderFor(memberSealer(s))
	return d
}

// provideTemplates builds the template use-cases over the run service (the one funnel).
func provideTemplates(s *serveSettings, st *store.Store, loader *execute.Loader, svc *runs.Service, log *slog.Logger) *templates.Service {
	return templates.New(templates.Deps{Store: st, Runs: svc, Loader: loader, Sealer: runsSealer(s),
		Audit: st, Log: log})
}
