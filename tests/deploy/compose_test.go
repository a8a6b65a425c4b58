package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// composeService is the part of a compose service these checks read.
type composeService struct {
	Image       string            `yaml:"image"`
	Profiles    []string          `yaml:"profiles"`
	Environment map[string]string `yaml:"environment"`
	Expose      []string          `yaml:"expose"`
	Command     []string          `yaml:"command"`
}

// documentedEndpoint is the tracing command line the compose file's header shows.
var documentedEndpoint = regexp.MustCompile(`OTEL_EXPORTER_OTLP_ENDPOINT=(http://([a-z0-9-]+):(\d+)) docker compose --profile (\S+) up`)

// Tracing in the compose file (SPEC §14.6): off by default, every member reads
// OTEL_EXPORTER_OTLP_ENDPOINT from the caller's environment, and the documented value names
// an OTLP/HTTP receiver the file itself starts under the documented profile.
func TestComposeOffersTracing(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "compose", "compose.yaml"))
	require.NoError(t, err)
	var file struct {
		Services map[string]composeService `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &file))

	members := 0
	for name, s := range file.Services {
		if !slices.Contains(s.Command, "serve") {
			continue
		}
		members++
		require.Equal(t, "${"+otlpEndpointEnv+":-}", s.Environment[otlpEndpointEnv],
			"%s: the endpoint comes from the caller's environment and is empty (tracing off) without it", name)
	}
	require.Equal(t, 3, members)

	m := documentedEndpoint.FindStringSubmatch(string(raw))
	require.NotNil(t, m, "the header documents how to turn tracing on")
	receiver, ok := file.Services[m[2]]
	require.True(t, ok, "the documented endpoint %s names a service of the file", m[1])
	require.Equal(t, []string{m[4]}, receiver.Profiles, "the receiver starts only with --profile %s", m[4])
	require.Contains(t, receiver.Expose, m[3], "the receiver takes OTLP/HTTP on port %s", m[3])
	require.Equal(t, "4318", m[3], "OTLP/HTTP's port")
	require.True(t, strings.Contains(receiver.Image, ":") && !strings.HasSuffix(receiver.Image, ":latest"),
		"the receiver's image is pinned: %s", receiver.Image)
}
