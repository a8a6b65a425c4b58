package testdb_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/testdb"
)

func TestChoose(t *testing.T) {
	t.Parallel()
	healthy := func() (bool, string) { return true, "" }
	down := func() (bool, string) { return false, "no docker socket" }
	cases := []struct {
		name   string
		url    string
		ci     bool
		docker func() (bool, string)
		want   testdb.Source
	}{
		{"env url wins even without docker", "postgres://x", false, down, testdb.FromEnv},
		{"env url wins under CI", "postgres://x", true, healthy, testdb.FromEnv},
		{"docker healthy gives a container", "", false, healthy, testdb.FromContainer},
		{"docker healthy under CI gives a container", "", true, healthy, testdb.FromContainer},
		{"nothing under CI fails", "", true, down, testdb.Fail},
		{"nothing outside CI skips", "", false, down, testdb.Skip},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := testdb.Choose("SLUICE_TEST_POSTGRES_URL", tc.url, tc.ci, tc.docker)
			require.Equal(t, tc.want, got.Source, got.Reason)
			switch tc.want {
			case testdb.Fail:
				require.Contains(t, got.Reason, "SLUICE_TEST_POSTGRES_URL")
				require.Contains(t, got.Reason, "CI")
				require.Contains(t, got.Reason, "no docker socket")
			case testdb.Skip:
				require.Contains(t, got.Reason, "SLUICE_TEST_POSTGRES_URL")
			default:
				require.Empty(t, got.Reason)
			}
		})
	}
}

// The engine is not asked when a URL is given: the check costs a round trip to Docker.
func TestChooseDoesNotProbeDockerWithURL(t *testing.T) {
	t.Parallel()
	asked := false
	testdb.Choose("V", "mysql://x", true, func() (bool, string) { asked = true; return true, "" })
	require.False(t, asked)
}
