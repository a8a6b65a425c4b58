package bootstrap

import (
	"runtime"
	"runtime/debug"

	"github.com/sluicehq/sluice/adapters/cli"
)

// buildInfo reads the version from the binary's build information (the module version for
// `go install`, the VCS revision when built from a checkout), so no linker flags are needed.
func buildInfo() cli.Info {
	info := cli.Info{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if v := bi.Main.Version; v != "" {
		info.Version = v
	}
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
			if len(info.Commit) > 12 {
				info.Commit = info.Commit[:12]
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && info.Commit != "" {
		info.Commit += "-dirty"
	}
	return info
}
