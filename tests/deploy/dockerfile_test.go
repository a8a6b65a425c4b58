package deploy_test

import (
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/deploy"
)

// root is the repository root, the Dockerfile's build context.
const root = "../.."

var dockerfile = filepath.Join(root, "deploy", "docker", "Dockerfile")

func parseDockerfile(t *testing.T) ([]deploy.Instruction, []deploy.Stage) {
	t.Helper()
	f, err := os.Open(dockerfile)
	require.NoError(t, err)
	defer f.Close()
	global, stages, err := deploy.ParseDockerfile(f)
	require.NoError(t, err)
	return global, stages
}

// buildLine is the RUN instruction of the build stage that runs `go build`.
func buildLine(t *testing.T, stages []deploy.Stage) string {
	t.Helper()
	var found []string
	for _, st := range stages {
		for _, in := range st.Instructions {
			if in.Cmd == "RUN" && strings.Contains(in.Args, "go build") {
				found = append(found, in.Args)
			}
		}
	}
	require.Len(t, found, 1, "exactly one RUN … go build")
	return found[0]
}

func TestDockerfileIsMultiStageNonRootAndFetchesNothing(t *testing.T) {
	t.Parallel()
	_, stages := parseDockerfile(t)
	require.GreaterOrEqual(t, len(stages), 2, "multi-stage: a build stage and a runtime stage")
	build, final := stages[0], stages[len(stages)-1]
	require.True(t, strings.HasPrefix(build.Base, "golang:"), "the build stage starts from the Go image, got %s", build.Base)
	require.Equal(t, "scratch", final.Base, "the runtime stage has nothing but what is copied in")

	var user string
	for _, in := range final.Instructions {
		switch in.Cmd {
		case "USER":
			user = in.Args
		case "RUN":
			require.Failf(t, "RUN in the runtime stage", "line %d: scratch has no shell: %s", in.Line, in.Args)
		case "COPY":
			require.Contains(t, in.Args, "--from=", "line %d: the runtime stage copies only from the build stage", in.Line)
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	require.Regexp(t, `^[1-9][0-9]*$`, uid, "USER is a numeric, non-root uid (runAsNonRoot can only verify a number)")

	url := regexp.MustCompile(`(?i)\b(https?|ftp)://`)
	for _, st := range stages {
		for _, in := range st.Instructions {
			if in.Cmd == "ADD" {
				require.NotRegexp(t, url, in.Args, "line %d: ADD fetches a URL unchecked", in.Line)
			}
		}
	}
	line := buildLine(t, stages)
	require.Contains(t, line, "CGO_ENABLED=0")
	require.Contains(t, line, "-trimpath")
}

// TestDockerfileBinaryKeepsZonesWithoutATzDatabase builds the binary with the
// Dockerfile's own `go build` line and runs `sluice schedule next` for Europe/Berlin in
// an empty root: no /usr/share/zoneinfo, no GOROOT, ZONEINFO unset. Only the tz data
// embedded in the binary (time/tzdata) can answer.
func TestDockerfileBinaryKeepsZonesWithoutATzDatabase(t *testing.T) {
	t.Parallel()
	_, stages := parseDockerfile(t)
	line := buildLine(t, stages)
	jail := t.TempDir()
	bin := filepath.Join(jail, "sluice")
	require.Contains(t, line, "-o /out/sluice")
	cmdline := strings.NewReplacer("-o /out/sluice", "-o "+bin,
		"${VERSION}", "v9.9.9-docker", "${COMMIT}", "0123456789abcdef0123").Replace(line)
	require.NotContains(t, cmdline, "${", "every build argument of the go build line is given here")

	build := exec.Command("sh", "-c", cmdline)
	build.Dir = root
	build.Env = withoutVars(os.Environ(), "GOFLAGS", "CGO_ENABLED")
	out, err := build.CombinedOutput()
	require.NoErrorf(t, err, "%s\n%s", cmdline, out)

	f, err := elf.Open(bin)
	require.NoError(t, err)
	for _, p := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, p.Type, "a static binary has no dynamic loader")
	}
	require.NoError(t, f.Close())

	version := inEmptyRoot(t, jail, "version", "--json")
	var v struct{ Version, Commit string }
	require.NoError(t, json.Unmarshal(version, &v), string(version))
	require.Equal(t, "v9.9.9-docker", v.Version, "the VERSION build argument reaches the binary")
	require.Equal(t, "0123456789ab", v.Commit)

	raw := inEmptyRoot(t, jail, "schedule", "next", "0 9 * * *", "--timezone", "Europe/Berlin",
		"--from", "2026-03-27T12:00:00Z", "--count", "2", "--json")
	var p struct {
		Instants []struct{ UTC, Local, Zone string }
	}
	require.NoError(t, json.Unmarshal(raw, &p), string(raw))
	require.Len(t, p.Instants, 2)
	// 09:00 in Berlin across the spring-forward of 2026-03-29: CET, then CEST.
	require.Equal(t, "2026-03-28T09:00:00+01:00", p.Instants[0].Local)
	require.Equal(t, "CET", p.Instants[0].Zone)
	require.Equal(t, "2026-03-29T09:00:00+02:00", p.Instants[1].Local)
	require.Equal(t, "CEST", p.Instants[1].Zone)
}

// inEmptyRoot runs /sluice args… chrooted into jail (which holds only the binary) with
// an empty environment, and returns its stdout. Unprivileged, it maps the user to root in
// a user namespace first (unshare -r), which chroot needs.
func inEmptyRoot(t *testing.T, jail string, args ...string) []byte {
	t.Helper()
	argv := append([]string{"chroot", jail, "/sluice"}, args...)
	if os.Geteuid() != 0 {
		argv = append([]string{"unshare", "-r"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{} // no ZONEINFO, no TZ, nothing
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoErrorf(t, err, "%v\n%s", argv, stderr.String())
	entries, err := os.ReadDir(jail)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the root holds nothing but the binary")
	return out
}

func withoutVars(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || k == n
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
