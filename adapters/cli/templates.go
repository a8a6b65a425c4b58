package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli/client"
)

// NewTemplatesCommand is `sluice templates register|list|run`: templates on a sluice
// server (SPEC §8), with the flags and token lookup of `sluice runs`.
func NewTemplatesCommand(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	cmd := &cobra.Command{
		Use:   "templates",
		Short: "Register, list and run templates on a sluice server",
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.server, "server", DefaultServer, "base URL of the sluice server")
	pf.StringVar(&f.token, "token", "", "API bearer token (default: the "+TokenFile+" file in --data-dir)")
	pf.StringVar(&f.dataDir, "data-dir", DefaultDataDir, "data directory of the local server, read for its "+TokenFile+" file")
	pf.BoolVar(&f.json, "json", false, "print JSON instead of tables")
	cmd.AddCommand(newTemplatesRegister(f), newTemplatesList(f), newTemplatesRun(f))
	return cmd
}

func newTemplatesRegister(f *runsFlags) *cobra.Command {
	var id, pool string
	var overrides, tenants []string
	var anyPool bool
	cmd := &cobra.Command{
		Use:   "register FILE",
		Short: "Register FILE as a template (re-registering an id makes its next version)",
		Long: "Register the pipeline config FILE (- for stdin) as a template. The id defaults to the\n" +
			"file name without its extension; its params block declares what runs may supply.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, _, err := readConfig(args[0], cmd.InOrStdin())
			if err != nil {
				return Usage(err)
			}
			if id == "" {
				if args[0] == "-" {
					return Usage(fmt.Errorf("--id is required when the config comes from stdin"))
				}
				base := filepath.Base(args[0])
				id = strings.TrimSuffix(base, filepath.Ext(base))
			}
			req := client.TemplateRequest{ID: id, Config: string(text), Pool: pool}
			switch {
			case anyPool:
				req.PoolOverride = true
			case len(overrides) > 0:
				req.PoolOverride = overrides
			}
			switch {
			case len(tenants) == 1 && tenants[0] == "*":
				req.Tenants = "*"
			case len(tenants) > 0:
				req.Tenants = tenants
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			t, err := c.RegisterTemplate(cmd.Context(), req)
			if err != nil {
				return f.apiError(cmd, "register "+args[0], err)
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), t)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "registered template %s version %d\n", t.ID, t.Version)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&id, "id", "", "template id (default: the file name without its extension)")
	fl.StringVar(&pool, "pool", "", "the template's pool (default: the config's, then default)")
	fl.StringSliceVar(&overrides, "pool-override", nil, "pool a run may ask for instead (repeatable)")
	fl.BoolVar(&anyPool, "any-pool", false, "let runs ask for any pool (pool_override: true)")
	fl.StringSliceVar(&tenants, "tenant", nil, "tenant that may run it on its tenant route (repeatable; * for all)")
	return cmd
}

func newTemplatesList(f *runsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List templates (newest versions)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			list, err := c.ListTemplates(cmd.Context())
			if err != nil {
				return f.apiError(cmd, "list templates", err)
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), list)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tVERSION\tPARAMS")
			for _, t := range list {
				var ps []string
				for _, p := range t.Params {
					s := p.Name + ":" + p.Type
					if p.Secret {
						s += " (secret)"
					}
					if p.Required {
						s += " (required)"
					}
					ps = append(ps, s)
				}
				fmt.Fprintf(w, "%s\t%d\t%s\n", t.ID, t.Version, strings.Join(ps, ", "))
			}
			return w.Flush()
		},
	}
}

func newTemplatesRun(f *runsFlags) *cobra.Command {
	var params, labels []string
	var pool, tenant, idemKey, runKey string
	var wait bool
	cmd := &cobra.Command{
		Use:   "run ID",
		Short: "Start a run of a template",
		Long:  "Start a run of template ID with --param NAME=VALUE (repeatable). With --wait, follow it like `runs submit --wait`.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps, err := parseKeyValues(params, "--param")
			if err != nil {
				return err
			}
			lbl, err := parseLabelFlags(labels)
			if err != nil {
				return err
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			res, err := c.RunTemplate(cmd.Context(), args[0], tenant, client.TemplateRunRequest{
				Params: ps, Pool: pool, Labels: lbl, IdempotencyKey: idemKey, RunKey: runKey})
			if err != nil {
				return f.apiError(cmd, "run template "+args[0], err)
			}
			if !wait {
				return f.printSubmitted(cmd.OutOrStdout(), res)
			}
			return f.wait(cmd, c, res.RunID)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&params, "param", nil, "param NAME=VALUE (repeatable)")
	fl.StringArrayVar(&labels, "label", nil, "label KEY=VALUE (repeatable)")
	fl.StringVar(&pool, "pool", "", "pool to run in (the template's pool_override must allow it)")
	fl.StringVar(&tenant, "tenant", "", "start it on this tenant's route (tenant principals must)")
	fl.StringVar(&idemKey, "idempotency-key", "", "resubmitting with the same key answers the first run")
	fl.StringVar(&runKey, "run-key", "", "unique per pipeline: a second run answers the existing one")
	fl.BoolVar(&wait, "wait", false, "wait until the run ends; the exit code tells how it ended")
	return cmd
}

// parseKeyValues reads NAME=VALUE flags; the error names the flag, never the value
// (a param may be a secret).
func parseKeyValues(list []string, flag string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(list))
	for i, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, Usage(fmt.Errorf("invalid value for %s (value %d): want NAME=VALUE", flag, i+1))
		}
		out[k] = v
	}
	return out, nil
}
