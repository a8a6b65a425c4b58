package cli

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"

	"github.com/spf13/cobra"
)

// NewContextCommand is `sluice context add|use|list|delete`: named servers kept in
// ContextsFile under the user's config directory, like kubectl's contexts.
func NewContextCommand(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	cmd := &cobra.Command{
		Use:   "context",
		Short: "Name the servers you talk to and pick the current one",
		Long: "A context is a server URL and the file holding its token. The current context is used by every\n" +
			"server command unless --server, --context or an explicit --data-dir says otherwise. Contexts live in\n" +
			ContextsFile + " under $SLUICE_CONFIG_DIR, else $XDG_CONFIG_HOME/sluice, else ~/.config/sluice.",
		Example: `  sluice context add prod --server https://sluice.example.com --token-file prod.token --use
  sluice context list
  sluice --context prod runs list`,
	}
	cmd.AddCommand(newContextAdd(f), newContextUse(f), newContextList(f), newContextDelete(f))
	return cmd
}

func newContextAdd(f *runsFlags) *cobra.Command {
	var server, tokenFile string
	var use bool
	cmd := &cobra.Command{
		Use:   "add NAME --server URL [--token-file FILE]",
		Short: "Add a context, or change one",
		Example: `  sluice context add prod --server https://sluice.example.com --token-file ~/.sluice-prod-token --use
  sluice context add local --server http://127.0.0.1:8080 --token-file .sluice/auth-token`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// --server is a global flag too; here it is the context's address.
			server, _ = cmd.Flags().GetString("server")
			u, err := url.Parse(server)
			if server == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return Usage(fmt.Errorf("invalid value for --server: %q is not a URL like %s", server, DefaultServer))
			}
			if tokenFile != "" {
				if tokenFile, err = filepath.Abs(tokenFile); err != nil {
					return Usage(fmt.Errorf("invalid value for --token-file: %w", err))
				}
			}
			cs, err := loadContexts(f.deps.ConfigDir)
			if err != nil {
				return err
			}
			cs.put(Context{Name: args[0], Server: server, TokenFile: tokenFile})
			if use || len(cs.Contexts) == 1 {
				cs.Current = args[0]
			}
			if err := cs.save(f.deps.ConfigDir); err != nil {
				return fmt.Errorf("save contexts: %w", err)
			}
			msg := fmt.Sprintf("context %s: %s", args[0], server)
			if cs.Current == args[0] {
				msg += " (current)"
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), msg)
			return err
		},
	}
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding the server's API token (read at each call, never copied)")
	cmd.Flags().BoolVar(&use, "use", false, "make it the current context")
	return cmd
}

func newContextUse(f *runsFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "use NAME",
		Short:   "Make NAME the current context",
		Example: "  sluice context use prod",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := loadContexts(f.deps.ConfigDir)
			if err != nil {
				return err
			}
			if _, ok := cs.find(args[0]); !ok {
				return Usage(fmt.Errorf("no context %q (see `sluice context list`; add one with `sluice context add`)", args[0]))
			}
			cs.Current = args[0]
			if err := cs.save(f.deps.ConfigDir); err != nil {
				return fmt.Errorf("save contexts: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "current context: %s\n", args[0])
			return err
		},
	}
}

// contextRow is a context as `context list -o json` shows it.
type contextRow struct {
	Context `yaml:",inline"`
	Current bool `json:"current"`
}

func newContextList(f *runsFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List contexts; * marks the current one",
		Example: "  sluice context list\n  sluice context list -o name",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.load(cmd); err != nil {
				return err
			}
			cs, err := loadContexts(f.deps.ConfigDir)
			if err != nil {
				return err
			}
			rows := make([]contextRow, 0, len(cs.Contexts))
			names := make([]string, 0, len(cs.Contexts))
			for _, c := range cs.Contexts {
				rows = append(rows, contextRow{Context: c, Current: c.Name == cs.Current})
				names = append(names, c.Name)
			}
			return f.print(cmd.OutOrStdout(), view{v: map[string]any{"contexts": rows}, names: names,
				table: func(w io.Writer, _ bool) error {
					g := grid{header: []string{"CURRENT", "NAME", "SERVER", "TOKEN FILE"}}
					for _, r := range rows {
						mark := ""
						if r.Current {
							mark = "*"
						}
						g.add([]string{mark, r.Name, r.Server, orDash(r.TokenFile)})
					}
					return g.write(w, false)
				}})
		},
	}
}

func newContextDelete(f *runsFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "delete NAME",
		Short:   "Delete a context (its token file stays)",
		Example: "  sluice context delete staging",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := loadContexts(f.deps.ConfigDir)
			if err != nil {
				return err
			}
			if !cs.remove(args[0]) {
				return Usage(fmt.Errorf("no context %q (see `sluice context list`)", args[0]))
			}
			if err := cs.save(f.deps.ConfigDir); err != nil {
				return fmt.Errorf("save contexts: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "deleted context %s\n", args[0])
			return err
		},
	}
}
