package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// NewKeygenCommand is `sluice keygen` (SPEC §7.1): it prints a fresh vault key made by gen
// on stdout, alone on its line so `SLUICE_VAULT_KEY=$(sluice keygen)` works, and a hint on
// stderr. gen is the vault adapter's key generator, which bootstrap hands in (this
// package imports no other adapter).
func NewKeygenCommand(gen func() (string, error)) *cobra.Command {
	return &cobra.Command{
		Use:   "keygen",
		Short: "Print a new random vault key (base64) for --vault-key",
		Long: "keygen prints 32 random bytes in base64: a key for --vault-key (SLUICE_VAULT_KEY).\n" +
			"Every member of a cluster needs the same key. To rotate, start the members with the new\n" +
			"key and the old one as --vault-previous-key, then run `sluice vault rewrap`.",
		Example: `  sluice keygen > vault.key
  sluice serve --vault-key "$(cat vault.key)"
  export SLUICE_VAULT_KEY=$(sluice keygen)    # the same key on every member`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := gen()
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("generate a vault key: %w", err)}
			}
			if _, err := fmt.Fprintln(cmd.OutOrStdout(), key); err != nil {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("print the key: %w", err)}
			}
			// The hint goes to stderr so that stdout holds the key and nothing else.
			_, _ = fmt.Fprintln(cmd.ErrOrStderr(),
				"pass this key as --vault-key (or SLUICE_VAULT_KEY) to every member; keep it secret: whoever holds it opens every sealed config")
			return nil
		},
	}
}
