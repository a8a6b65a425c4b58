package bootstrap

import (
	"runtime"
	"runtime/debug"

	"github.com/sluicehq/sluice/adapters/cli"
)

// version and commit are set by the linker when a build passes them, e.g.
//
//	go build -ldflags "-X github.com/sluicehq/sluice/bootstrap.version=v1.4.0 -X github.com/sluicehq/sluice/bootstrap.commit=$(git rev-parse HEAD)"
//
// They are package variables only because -X can set nothing else. They matter where the
// build info has no VCS stamp: a container build without .git, a git worktree (whose .git
// is a file the go command does not stamp from), -buildvcs=false.
var (
	version string
	commit  string
)

// buildInfo is the identity of this binary, read once at start.
func buildInfo() cli.Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return identify(bi, version, commit)
}

// identify names a binary from its build information and the linker-set values: the
// -ldflags version wins over the module version (a `go install module@vX` build), which
// wins over "(devel)"; the commit is the -ldflags one or the stamped vcs.revision
// (shortened to 12), with "-dirty" and Modified when vcs.modified says the tree had
// uncommitted changes.
func identify(bi *debug.BuildInfo, ldVersion, ldCommit string) cli.Info {
	info := cli.Info{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			info.Version = v
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if ldVersion != "" {
		info.Version = ldVersion
	}
	if ldCommit != "" {
		info.Commit = ldCommit
	}
	if len(info.Commit) > 12 {
		info.Commit = info.Commit[:12]
	}
	if info.Modified && info.Commit != "" {
		info.Commit += "-dirty"
	}
	return info
}
