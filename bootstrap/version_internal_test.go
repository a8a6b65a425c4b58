package bootstrap

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIdentifyReadsTheBuildInfo(t *testing.T) {
	t.Parallel()
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.modified", Value: "true"},
	}}
	cases := map[string]struct {
		bi                  *debug.BuildInfo
		ldVersion, ldCommit string
		version, commit     string
		modified            bool
	}{
		"vcs stamp of a checkout": {bi: stamped, version: "(devel)", commit: "0123456789ab-dirty", modified: true},
		"clean checkout": {bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "fedcba9876543210"}, {Key: "vcs.modified", Value: "false"}}},
			version: "(devel)", commit: "fedcba987654"},
		"go install module@version": {bi: &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, version: "v1.3.0"},
		"-ldflags -X wins":          {bi: stamped, ldVersion: "v2.0.0", ldCommit: "abcdef", version: "v2.0.0", commit: "abcdef-dirty", modified: true},
		"-ldflags without vcs stamp": {bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, ldVersion: "v2.0.0",
			ldCommit: "1111111111111111111111", version: "v2.0.0", commit: "111111111111"},
		"no build info": {version: "(devel)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := identify(tc.bi, tc.ldVersion, tc.ldCommit)
			require.Equal(t, tc.version, got.Version)
			require.Equal(t, tc.commit, got.Commit)
			require.Equal(t, tc.modified, got.Modified)
			require.NotEmpty(t, got.GoVersion)
		})
	}
}
