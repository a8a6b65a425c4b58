package bootstrap

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli"
)

// addVault wires `sluice vault rewrap`: re-seal every ciphertext of a history under the
// current key (SPEC §7.1), after a rotation started members with the new key and the old
// one as --vault-previous-key.
func addVault(root *cobra.Command, p *process) {
	f := &migrateFlags{}
	var keys vaultFlags
	cmd := &cobra.Command{Use: "vault", Short: "Manage the sealed parts of the run history",
		Example: `  sluice vault rewrap --history postgres://sluice@db:5432/sluice --vault-key "$NEW" --vault-previous-key "$OLD"`}
	rewrap := &cobra.Command{
		Use:   "rewrap",
		Short: "Re-seal every sealed config, secret and template under the current vault key",
		Long: "Re-seal every sealed config, secret and template of the history under --vault-key.\n" +
			"Give the keys they were sealed with as --vault-previous-key. Rows already under the\n" +
			"current key are opened (so tampering is found) and left alone; it is safe to run again.",
		Example: `  # 1. restart every member with --vault-key NEW --vault-previous-key OLD, then:
  sluice vault rewrap --history postgres://sluice@db:5432/sluice --vault-key "$NEW" --vault-previous-key "$OLD"
  sluice vault rewrap --data-dir .sluice --vault-key "$(cat new.key)" --vault-previous-key "$(cat old.key)"`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keys.key == "" {
				return cli.Usage(fmt.Errorf("--vault-key is required: the key to re-seal under (SLUICE_VAULT_KEY)"))
			}
			v, err := keys.open()
			if err != nil {
				return cli.Usage(fmt.Errorf("invalid value for %w", err))
			}
			historyURL, _, _, err := f.target()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			st, err := p.openHistory(ctx, historyURL)
			if err != nil {
				return err
			}
			defer st.Close()
			n, err := st.Rewrap(ctx, v.Rewrap)
			if err != nil {
				return p.failure(err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "re-sealed %d values under vault key %s\n", n, v.KeyID())
			return err
		},
	}
	fs := rewrap.Flags()
	fs.StringVar(&f.history, "history", "", "run history: sqlite:PATH, sqlite://PATH, postgres://… or postgresql://… (default sqlite:<data-dir>/"+HistoryFileName+")")
	fs.StringVar(&f.dataDir, "data-dir", cli.DefaultDataDir, "data directory of the default history")
	keys.register(fs)
	cmd.AddCommand(rewrap)
	root.AddCommand(cli.EnvAll(cmd))
}

// addTemplates wires the template client commands (`sluice templates …`).
func addTemplates(root *cobra.Command, p *process) {
	root.AddCommand(cli.NewTemplatesCommand(p.clientDeps()))
}
