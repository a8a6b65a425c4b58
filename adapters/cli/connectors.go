package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// connectorInfo is a connector as `connectors list|describe -o json` shows it: the shape
// of GET /v1/connectors, read from this binary's own registry (no server needed).
type connectorInfo struct {
	Type        string                    `json:"type"`
	Description string                    `json:"description"`
	Roles       []string                  `json:"roles"`
	ExactlyOnce bool                      `json:"exactly_once"`
	Shardable   bool                      `json:"shardable"`
	Schemas     map[string]map[string]any `json:"schemas"`
}

func toConnectorInfo(s pipeline.Spec) connectorInfo {
	out := connectorInfo{Type: s.Type, Description: s.Description, Roles: []string{}, ExactlyOnce: s.ExactlyOnce,
		Shardable: s.Shardable, Schemas: map[string]map[string]any{}}
	for _, role := range []pipeline.Role{pipeline.RoleSource, pipeline.RoleSink} {
		if s.Roles&role != 0 {
			out.Roles = append(out.Roles, role.String())
			out.Schemas[role.String()] = pipeline.JSONSchema(s, role)
		}
	}
	return out
}

// NewConnectorsCommand is `sluice connectors list|describe`, offline: specs lists the
// connectors compiled into this binary, the same registry `run` and `serve` use.
func NewConnectorsCommand(specs func() []pipeline.Spec) *cobra.Command {
	f := &runsFlags{}
	sorted := func() []pipeline.Spec {
		list := slices.Clone(specs())
		slices.SortFunc(list, func(a, b pipeline.Spec) int { return cmp.Compare(a.Type, b.Type) })
		return list
	}
	cmd := &cobra.Command{Use: "connectors", Short: "List the connectors of this binary and describe their config keys",
		Example: "  sluice connectors list\n  sluice connectors describe postgres"}
	list := &cobra.Command{
		Use:     "list",
		Short:   "List connectors with what they can be (source, sink) and do",
		Example: "  sluice connectors list\n  sluice connectors list -o name",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.load(cmd); err != nil {
				return err
			}
			all := sorted()
			infos := make([]connectorInfo, 0, len(all))
			names := make([]string, 0, len(all))
			for _, s := range all {
				infos = append(infos, toConnectorInfo(s))
				names = append(names, s.Type)
			}
			return f.print(cmd.OutOrStdout(), view{v: map[string]any{"connectors": infos}, names: names,
				table: func(w io.Writer, wide bool) error {
					g := grid{header: []string{"TYPE", "ROLES", "DESCRIPTION"}, wideHeader: []string{"EXACTLY ONCE", "SHARDABLE"}}
					for _, c := range infos {
						g.add([]string{c.Type, strings.Join(c.Roles, ","), c.Description},
							fmt.Sprint(c.ExactlyOnce), fmt.Sprint(c.Shardable))
					}
					return g.write(w, wide)
				}})
		},
	}
	describe := &cobra.Command{
		Use:   "describe TYPE",
		Short: "Describe a connector's config keys (-o json gives its JSON Schema per role)",
		Example: `  sluice connectors describe postgres
  sluice connectors describe file -o json`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, s := range specs() {
				names = append(names, s.Type)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.load(cmd); err != nil {
				return err
			}
			all := sorted()
			i := slices.IndexFunc(all, func(s pipeline.Spec) bool { return s.Type == args[0] })
			if i < 0 {
				types := make([]string, 0, len(all))
				for _, s := range all {
					types = append(types, s.Type)
				}
				return Usage(fmt.Errorf("no connector %q: this binary has %s", args[0], strings.Join(types, ", ")))
			}
			s := all[i]
			return f.print(cmd.OutOrStdout(), view{v: toConnectorInfo(s), names: []string{s.Type},
				table: func(w io.Writer, wide bool) error { return describeConnector(w, s, wide) }})
		},
	}
	cmd.AddCommand(list, describe)
	return cmd
}

func describeConnector(w io.Writer, s pipeline.Spec, wide bool) error {
	fmt.Fprintf(w, "%s (%s): %s\n\n", s.Type, s.Roles, s.Description)
	g := grid{header: []string{"KEY", "TYPE", "ROLE", "REQUIRED", "DEFAULT"}, wideHeader: []string{"ALLOWED", "DESCRIPTION"}}
	for _, fs := range s.Fields {
		role := "both"
		if fs.Role != 0 && fs.Role != pipeline.RoleBoth {
			role = fs.Role.String()
		}
		def := "-"
		if fs.Default != nil {
			def = fmt.Sprint(fs.Default)
		}
		typ := string(fs.Type)
		if fs.Secret {
			typ += " (secret)"
		}
		g.add([]string{fs.Name, typ, role, fmt.Sprint(fs.Required), def}, orDash(strings.Join(fs.Enum, "|")), fs.Description)
	}
	return g.write(w, wide)
}
