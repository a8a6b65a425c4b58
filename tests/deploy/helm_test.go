package deploy_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// EnvHelmRendered names the file `helm template` wrote the chart's manifests to; .ci/run
// renders deploy/helm/sluice with deploy/helm/ci-values.yaml and sets it.
const EnvHelmRendered = "SLUICE_HELM_RENDERED"

// manifest is the part of a rendered Kubernetes object these checks read.
type manifest struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		MaxUnavailable any `yaml:"maxUnavailable"`
		MinAvailable   any `yaml:"minAvailable"`
		Template       struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
}

type podSpec struct {
	TerminationGracePeriodSeconds *int              `yaml:"terminationGracePeriodSeconds"`
	NodeSelector                  map[string]string `yaml:"nodeSelector"`
	Containers                    []container       `yaml:"containers"`
	Volumes                       []struct {
		Name   string `yaml:"name"`
		Secret *struct {
			SecretName string `yaml:"secretName"`
		} `yaml:"secret"`
	} `yaml:"volumes"`
}

type container struct {
	Args []string `yaml:"args"`
	Env  []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	VolumeMounts   []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
	} `yaml:"httpGet"`
}

// otlpEndpointEnv is OpenTelemetry's variable for the OTLP receiver, which sluice reads.
const otlpEndpointEnv = "OTEL_EXPORTER_OTLP_ENDPOINT"

// ciValues is what deploy/helm/ci-values.yaml asks the chart for.
type ciValues struct {
	Tracing struct {
		OTLPEndpoint string `yaml:"otlpEndpoint"`
	} `yaml:"tracing"`
	Pools []struct {
		Name         string            `yaml:"name"`
		Replicas     int               `yaml:"replicas"`
		NodeSelector map[string]string `yaml:"nodeSelector"`
	} `yaml:"pools"`
}

func rendered(t *testing.T) []manifest {
	t.Helper()
	path := os.Getenv(EnvHelmRendered)
	if path == "" {
		require.Empty(t, os.Getenv("CI"), "%s is not set: .ci/run renders the chart with helm template and sets it", EnvHelmRendered)
		t.Skipf("%s is not set (helm template output absent): run .ci/run to render the chart", EnvHelmRendered)
	}
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dec := yaml.NewDecoder(f)
	var out []manifest
	for {
		var m manifest
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if m.Kind != "" {
			out = append(out, m)
		}
	}
	require.NotEmpty(t, out, "%s holds no manifests", path)
	return out
}

// flagValue is the value after flag in args; ok=false when flag is absent.
func flagValues(args []string, flag string) []string {
	var out []string
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			out = append(out, args[i+1])
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			out = append(out, v)
		}
	}
	return out
}

func intFlag(t *testing.T, args []string, flag string, def int) int {
	t.Helper()
	vals := flagValues(args, flag)
	if len(vals) == 0 {
		return def
	}
	require.Len(t, vals, 1, "%s given more than once", flag)
	n, err := strconv.Atoi(vals[0])
	require.NoError(t, err, flag)
	return n
}

func subset(sub, of map[string]string) bool {
	for k, v := range sub {
		if of[k] != v {
			return false
		}
	}
	return len(sub) > 0
}

func readCIValues(t *testing.T) ciValues {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "helm", "ci-values.yaml"))
	require.NoError(t, err)
	var want ciValues
	require.NoError(t, yaml.Unmarshal(raw, &want))
	return want
}

// tracing.otlpEndpoint is the chart's tracing switch (SPEC §14.6): every member gets it as
// OTEL_EXPORTER_OTLP_ENDPOINT, which serve reads as --otlp-endpoint.
func TestHelmChartRendersTracing(t *testing.T) {
	t.Parallel()
	objs := rendered(t)
	want := readCIValues(t).Tracing.OTLPEndpoint
	require.NotEmpty(t, want, "CI renders the chart with tracing on")
	members := 0
	for _, m := range objs {
		if m.Kind != "Deployment" && m.Kind != "StatefulSet" {
			continue
		}
		members++
		var got []string
		for _, e := range m.Spec.Template.Spec.Containers[0].Env {
			if e.Name == otlpEndpointEnv {
				got = append(got, e.Value)
			}
		}
		require.Equal(t, []string{want}, got, "%s: %s is tracing.otlpEndpoint, once", m.Metadata.Name, otlpEndpointEnv)
	}
	require.NotZero(t, members)
}

func TestHelmChartRendersSafeMembers(t *testing.T) {
	t.Parallel()
	objs := rendered(t)
	want := readCIValues(t)
	require.GreaterOrEqual(t, len(want.Pools), 2, "CI renders at least two pools")

	var deployments, pdbs []manifest
	services := 0
	for _, m := range objs {
		switch m.Kind {
		case "Deployment", "StatefulSet":
			deployments = append(deployments, m)
		case "PodDisruptionBudget":
			pdbs = append(pdbs, m)
		case "Service":
			services++
		case "Secret":
			require.Failf(t, "the chart renders a Secret", "%s: secrets are referenced, never inlined in values", m.Metadata.Name)
		}
	}
	require.Equal(t, 1, services, "one Service in front of the members")

	pools := map[string]manifest{}
	for _, d := range deployments {
		pod := d.Spec.Template.Spec
		require.Len(t, pod.Containers, 1, d.Metadata.Name)
		c := pod.Containers[0]
		require.Contains(t, c.Args, "--cluster", d.Metadata.Name)

		p := flagValues(c.Args, "--pool")
		require.Len(t, p, 1, "%s: one --pool per member group", d.Metadata.Name)
		require.NotContains(t, pools, p[0], "pool %s rendered twice", p[0])
		pools[p[0]] = d

		require.NotNil(t, c.LivenessProbe, d.Metadata.Name)
		require.NotNil(t, c.LivenessProbe.HTTPGet, d.Metadata.Name)
		require.Equal(t, "/livez", c.LivenessProbe.HTTPGet.Path, d.Metadata.Name)
		require.NotNil(t, c.ReadinessProbe, d.Metadata.Name)
		require.NotNil(t, c.ReadinessProbe.HTTPGet, d.Metadata.Name)
		require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path, d.Metadata.Name)

		grace := intFlag(t, c.Args, "--shutdown-grace-secs", 60)
		kill := intFlag(t, c.Args, "--shutdown-kill-secs", 10)
		require.NotNil(t, pod.TerminationGracePeriodSeconds, d.Metadata.Name)
		require.GreaterOrEqual(t, *pod.TerminationGracePeriodSeconds, grace+kill+5,
			"%s: terminationGracePeriodSeconds ≥ shutdown grace %d + kill %d + 5", d.Metadata.Name, grace, kill)

		checkSecrets(t, d.Metadata.Name, pod, c)

		covered := 0
		for _, b := range pdbs {
			if subset(b.Spec.Selector.MatchLabels, d.Spec.Template.Metadata.Labels) {
				covered++
				require.True(t, b.Spec.MaxUnavailable != nil || b.Spec.MinAvailable != nil, b.Metadata.Name)
			}
		}
		require.Equal(t, 1, covered, "%s: exactly one PodDisruptionBudget selects its pods", d.Metadata.Name)
	}
	require.Len(t, pools, len(want.Pools))
	for _, p := range want.Pools {
		d, ok := pools[p.Name]
		require.True(t, ok, "pool %s of ci-values.yaml has no members", p.Name)
		for k, v := range p.NodeSelector {
			require.Equal(t, v, d.Spec.Template.Spec.NodeSelector[k], "pool %s: nodeSelector %s", p.Name, k)
		}
	}
}

// checkSecrets requires the history URL and vault key to come from Secrets by reference
// and the principals file from a Secret volume; no env value may carry a credential.
func checkSecrets(t *testing.T, name string, pod podSpec, c container) {
	t.Helper()
	fromSecret := map[string]bool{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			require.Empty(t, e.Value, "%s: %s has both a value and a secretKeyRef", name, e.Name)
			fromSecret[e.Name] = true
			continue
		}
		if e.Name == otlpEndpointEnv {
			// The receiver's address is no secret; its credentials would be.
			require.NotContains(t, e.Value, "@", "%s: %s carries credentials", name, e.Name)
			continue
		}
		require.NotContains(t, e.Value, "://", "%s: %s inlines a URL", name, e.Name)
		require.NotContains(t, []string{"SLUICE_HISTORY", "SLUICE_VAULT_KEY", "SLUICE_AUTH_TOKEN"}, e.Name,
			"%s: %s is inlined", name, e.Name)
	}
	require.True(t, fromSecret["SLUICE_HISTORY"], "%s: the history URL comes from a Secret", name)
	require.True(t, fromSecret["SLUICE_VAULT_KEY"], "%s: the vault key comes from a Secret", name)
	for _, a := range c.Args {
		require.NotContains(t, a, "://", "%s: an argument inlines a URL", name)
	}
	require.Empty(t, flagValues(c.Args, "--history"), "%s: --history on the command line would show the password in ps", name)
	require.Empty(t, flagValues(c.Args, "--vault-key"), name)
	require.Empty(t, flagValues(c.Args, "--auth-token"), name)

	auth := flagValues(c.Args, "--auth-config")
	require.Len(t, auth, 1, "%s: principals from --auth-config", name)
	secretVolumes := map[string]bool{}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			secretVolumes[v.Name] = true
		}
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		if secretVolumes[m.Name] && strings.HasPrefix(auth[0], strings.TrimSuffix(m.MountPath, "/")+"/") {
			mounted = true
		}
	}
	require.True(t, mounted, "%s: --auth-config %s is read from a mounted Secret", name, auth[0])
}
