package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli/client"
)

// NewTemplatesCommand is `sluice templates register|list|run`: templates on a sluice
// server (SPEC §8), with the flags and token lookup of `sluice runs`.
func NewTemplatesCommand(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	cmd := &cobra.Command{
		Use:   "templates",
		Short: "Register, list, show, run, fan out and delete templates on a sluice server",
		Example: `  sluice templates register orders.tpl.yaml
  sluice templates run orders --param day=2026-12-01 --wait
  sluice templates fanout orders --param day=2026-12-02,2026-12-03`,
	}
	cmd.AddCommand(newTemplatesRegister(f), newTemplatesList(f), newTemplatesRun(f), newTemplatesGet(f),
		newTemplatesDelete(f), newTemplatesFanout(f))
	return cmd
}

func newTemplatesRegister(f *runsFlags) *cobra.Command {
	var id, pool string
	var overrides, tenants []string
	var anyPool bool
	cmd := &cobra.Command{
		Use:   "register FILE",
		Short: "Register FILE as a template (re-registering an id makes its next version)",
		Long: "Register the pipeline config FILE (- for stdin) as a template. Its id is the config's `name`\n" +
			"unless --id says otherwise; its params block declares what runs may supply.",
		Example: `  sluice templates register orders.tpl.yaml
  sluice templates register orders.tpl.yaml --id orders-eu --tenant acme --pool-override gpu`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, _, err := readConfig(args[0], cmd.InOrStdin())
			if err != nil {
				return Usage(err)
			}
			if id == "" {
				if id, err = configName(text); err != nil {
					return Usage(fmt.Errorf("%s: %w", args[0], err))
				}
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
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			t, err := c.RegisterTemplate(cmd.Context(), req)
			if err != nil {
				return f.apiError(cmd, "register "+args[0], err)
			}
			if f.output != OutputTable && f.output != OutputWide {
				return f.print(cmd.OutOrStdout(), templatesView(t))
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "registered template %s version %d\n", t.ID, t.Version)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&id, "id", "", "template id (default: the config's name)")
	fl.StringVar(&pool, "pool", "", "the template's pool (default: the config's, then default)")
	fl.StringSliceVar(&overrides, "pool-override", nil, "pool a run may ask for instead (repeatable)")
	fl.BoolVar(&anyPool, "any-pool", false, "let runs ask for any pool (pool_override: true)")
	fl.StringSliceVar(&tenants, "tenant", nil, "tenant that may run it on its tenant route (repeatable; * for all)")
	return cmd
}

func newTemplatesList(f *runsFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List templates (newest versions)",
		Example: "  sluice templates list\n  sluice templates list -o name",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			list, err := c.ListTemplates(cmd.Context())
			if err != nil {
				return f.apiError(cmd, "list templates", err)
			}
			v := templatesView(list...)
			v.v = map[string]any{"templates": list}
			return f.print(cmd.OutOrStdout(), v)
		},
	}
}

func newTemplatesGet(f *runsFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "get ID",
		Short:   "Show a template's newest version: its params, pool and tenants",
		Example: "  sluice templates get orders\n  sluice templates get orders -o yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			t, err := c.Template(cmd.Context(), args[0])
			if err != nil {
				return f.apiError(cmd, "get template "+args[0], err)
			}
			return f.print(cmd.OutOrStdout(), templatesView(t))
		},
	}
}

// templatesView prints templates; one template's json/yaml is the template itself.
func templatesView(list ...client.Template) view {
	var v any = list
	if len(list) == 1 {
		v = list[0]
	}
	names := make([]string, 0, len(list))
	for _, t := range list {
		names = append(names, t.ID)
	}
	return view{v: v, names: names, table: func(w io.Writer, wide bool) error {
		g := grid{header: []string{"ID", "VERSION", "PARAMS"}, wideHeader: []string{"POOL", "TENANTS", "CREATED BY", "CREATED"}}
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
			g.add([]string{t.ID, fmt.Sprint(t.Version), orDash(strings.Join(ps, ", "))},
				orDash(deref(t.Pool)), orDash(anyText(t.Tenants)), t.CreatedBy, t.CreatedAt)
		}
		return g.write(w, wide)
	}}
}

// anyText shows "*" or a list of names.
func anyText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []any:
		parts := make([]string, 0, len(x))
		for _, p := range x {
			parts = append(parts, fmt.Sprint(p))
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

func newTemplatesDelete(f *runsFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "delete ID",
		Short:   "Delete a template with all its versions (its runs stay)",
		Example: "  sluice templates delete orders",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			if err := c.DeleteTemplate(cmd.Context(), args[0]); err != nil {
				return f.apiError(cmd, "delete template "+args[0], err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "deleted template %s\n", args[0])
			return err
		},
	}
}

// configName reads the `name` of a pipeline config, the default template id.
func configName(text []byte) (string, error) {
	var doc struct {
		Name string `yaml:"name"`
	}
	if err := yaml.Unmarshal(text, &doc); err != nil || strings.TrimSpace(doc.Name) == "" {
		return "", errors.New("the config has no `name` to use as the template id: add one, or pass --id")
	}
	return strings.TrimSpace(doc.Name), nil
}

func newTemplatesRun(f *runsFlags) *cobra.Command {
	var params, labels []string
	var pool, tenant, idemKey, runKey string
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "run ID",
		Short: "Start a run of a template",
		Long: "Start a run of template ID with --param NAME=VALUE (repeatable). With --wait, follow it like\n" +
			"`sluice runs wait` and exit with its exit codes.",
		Example: `  sluice templates run orders --param day=2026-03-01 --wait
  sluice templates run orders --tenant acme --param day=2026-03-01 --run-key 2026-03-01`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps, err := parseKeyValues(params, "--param")
			if err != nil {
				return err
			}
			lbl, err := parseLabelFlags(labels)
			if err != nil {
				return err
			}
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			res, err := c.RunTemplate(cmd.Context(), args[0], tenant, client.TemplateRunRequest{
				Params: ps, Pool: pool, Labels: lbl, IdempotencyKey: idemKey, RunKey: runKey})
			if err != nil {
				return f.apiError(cmd, "run template "+args[0], err)
			}
			return f.afterSubmit(cmd, c, res, w)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&params, "param", nil, "param NAME=VALUE (repeatable)")
	fl.StringArrayVar(&labels, "label", nil, "label KEY=VALUE (repeatable)")
	fl.StringVar(&pool, "pool", "", "pool to run in (the template's pool_override must allow it)")
	fl.StringVar(&tenant, "tenant", "", "start it on this tenant's route (tenant principals must)")
	fl.StringVar(&idemKey, "idempotency-key", "", "resubmitting with the same key answers the first run")
	fl.StringVar(&runKey, "run-key", "", "unique per pipeline: a second run answers the existing one")
	w.register(fl)
	return cmd
}

func newTemplatesFanout(f *runsFlags) *cobra.Command {
	var params []string
	var pool string
	cmd := &cobra.Command{
		Use:   "fanout ID --param NAME=V1,V2,…",
		Short: "Start one run of a template per value of a param, in one request",
		Long: "Start one run per value: --param region=eu,us,ap makes three runs. Several --param flags\n" +
			"with lists combine pairwise (all lists must be as long); a single value applies to every run.",
		Example: `  sluice templates fanout orders --param day=2026-03-01 --param region=eu,us,ap
  sluice templates fanout orders --param day=2026-03-01,2026-03-02 -o name`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, err := fanoutRuns(params)
			if err != nil {
				return err
			}
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			results, err := c.Fanout(cmd.Context(), args[0], client.FanoutRequest{Runs: runs, Pool: pool})
			if err != nil {
				return f.apiError(cmd, "fan out template "+args[0], err)
			}
			if err := f.print(cmd.OutOrStdout(), fanoutView(results)); err != nil {
				return err
			}
			// Each entry is decided alone; one refused entry makes the call a failure so
			// scripts notice, while the runs that were created stay.
			proposed := ""
			for _, r := range results {
				if r.Error != nil {
					return &ExitError{Code: ExitFailure, Err: fmt.Errorf("fan-out of %s: some entries were refused", args[0]), Printed: true}
				}
				if r.ChangeRequestID != "" {
					proposed = r.ChangeRequestID
				}
			}
			if proposed != "" {
				// Runs wait for another operator's approval: exit 3, like runs submit.
				return proposedExit(proposed)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&params, "param", nil, "param NAME=VALUE or NAME=V1,V2,… (repeatable)")
	cmd.Flags().StringVar(&pool, "pool", "", "pool every run executes in")
	return cmd
}

// fanoutRuns expands NAME=V1,V2 flags into one params map per value.
func fanoutRuns(flags []string) ([]client.FanoutRun, error) {
	n := 1
	lists := map[string][]string{}
	for i, kv := range flags {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, Usage(fmt.Errorf("invalid value for --param (value %d): want NAME=VALUE or NAME=V1,V2", i+1))
		}
		vals := strings.Split(v, ",")
		if len(vals) > 1 {
			if n > 1 && len(vals) != n {
				return nil, Usage(fmt.Errorf("invalid value for --param %s: %d values, but another --param has %d", k, len(vals), n))
			}
			n = len(vals)
		}
		lists[k] = vals
	}
	out := make([]client.FanoutRun, n)
	for i := range out {
		out[i].Params = map[string]string{}
		for k, vals := range lists {
			if len(vals) == 1 {
				out[i].Params[k] = vals[0]
			} else {
				out[i].Params[k] = vals[i]
			}
		}
	}
	return out, nil
}

func fanoutView(results []client.FanoutResult) view {
	names := []string{}
	for _, r := range results {
		if r.RunID != "" {
			names = append(names, r.RunID)
		} else if r.ChangeRequestID != "" {
			names = append(names, r.ChangeRequestID)
		}
	}
	return view{v: map[string]any{"runs": results}, names: names, table: func(w io.Writer, _ bool) error {
		g := grid{header: []string{"#", "RUN ID", "STATUS", "NOTE"}}
		for i, r := range results {
			switch {
			case r.Error != nil:
				g.add([]string{fmt.Sprint(i + 1), "-", "refused", r.Error.Code + ": " + r.Error.Message})
			case r.ChangeRequestID != "":
				g.add([]string{fmt.Sprint(i + 1), "-", "proposed", "change request " + r.ChangeRequestID})
			default:
				note := "-"
				if r.Replayed {
					note = "already existed"
				}
				g.add([]string{fmt.Sprint(i + 1), r.RunID, r.Status, note})
			}
		}
		return g.write(w, false)
	}}
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
