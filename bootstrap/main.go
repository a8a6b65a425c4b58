package bootstrap

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/adapters/connectors/builtin"
	"github.com/sluicehq/sluice/domain/secret"
	"github.com/sluicehq/sluice/examples"
)

// process is what every command group shares within one process.
type process struct {
	env cli.Env
	// redactor is process-wide: values read through directives are registered once and
	// hidden from every log line and message, whichever command prints them.
	redactor *secret.Redactor
	info     cli.Info
}

// group adds one set of commands to the root.
type group func(root *cobra.Command, p *process)

// Main runs the sluice command line with args (os.Args) and returns the exit code.
func Main(args []string) int { return Run(context.Background(), args, cli.OSEnv()) }

// Run is Main with the process environment given: args include the program name, env
// supplies stdio and the variables both flags (SLUICE_*) and config directives read.
func Run(ctx context.Context, args []string, env cli.Env) int {
	root := newRootCommand(&process{env: env, redactor: secret.NewRedactor(), info: buildInfo()})
	if len(args) > 0 {
		args = args[1:]
	}
	return cli.Execute(ctx, root, args, env)
}

// newRootCommand is the whole command tree of the binary.
func newRootCommand(p *process) *cobra.Command {
	root := cli.NewRoot(p.info)
	for _, add := range []group{
		addVersion,
		addLocal,
		addRuns,
		addServe,
		addMigrate,
		addKeygen,
		addVault,
		addTemplates,
		addSchedule,
		addClientTools,
	} {
		add(root, p)
	}
	return root
}

func addVersion(root *cobra.Command, p *process) { root.AddCommand(cli.NewVersionCommand(p.info)) }

// addRuns wires the API client commands (`sluice runs …`) and the stdio MCP proxy
// (`sluice mcp`), which talk to a server the same way.
func addRuns(root *cobra.Command, p *process) {
	root.AddCommand(cli.NewRunsCommand(p.clientDeps()), cli.NewMCPCommand(p.clientDeps()))
}

// clientDeps is what every command talking to a server shares: where the contexts are.
func (p *process) clientDeps() cli.RunsDeps {
	return cli.RunsDeps{ConfigDir: cli.ConfigDir(p.env.Lookup)}
}

// addClientTools wires the remaining client commands (change requests, audit, cluster
// status, contexts), the offline connector catalogue, `init` and shell completion.
func addClientTools(root *cobra.Command, p *process) {
	specs := builtin.Registry().Specs
	root.AddCommand(
		cli.NewChangeRequestsCommand(p.clientDeps()),
		cli.NewAuditCommand(p.clientDeps()),
		cli.NewClusterCommand(p.clientDeps()),
		cli.NewContextCommand(p.clientDeps()),
		cli.NewConnectorsCommand(specs),
		cli.NewCompletionCommand(),
		cli.NewInitCommand(examples.Files()),
	)
}
