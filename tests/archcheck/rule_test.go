package archcheck_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/archcheck"
)

// TestDependencyRule lists every non-test package with `go list` and checks each import.
func TestDependencyRule(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", archcheck.Module+"/...")
	out, err := cmd.Output()
	require.NoError(t, err, "go list failed")
	dec := json.NewDecoder(bytesReader(out))
	var violations []string
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		for _, imp := range p.Imports {
			if why := archcheck.Check(p.ImportPath, imp); why != "" {
				violations = append(violations, p.ImportPath+" imports "+imp+": "+why)
			}
		}
	}
	require.Empty(t, violations)
}

func TestCheckRefusesForbiddenImports(t *testing.T) {
	t.Parallel()
	m := archcheck.Module
	cases := []struct {
		pkg, imp string
		ok       bool
	}{
		{m + "/domain/run", "fmt", true},
		{m + "/domain/run", "github.com/google/uuid", true},
		{m + "/domain/schedule", "github.com/robfig/cron/v3", true},
		{m + "/domain/run", "github.com/uptrace/bun", false},
		{m + "/domain/run", m + "/application/runs", false},
		{m + "/domain/run", "gopkg.in/yaml.v3", false},
		{m + "/application/runs", m + "/domain/run", true},
		{m + "/application/runs", m + "/application/execute", true},
		{m + "/application/runs", m + "/adapters/store", false},
		{m + "/application/runs", "github.com/gin-gonic/gin", false},
		{m + "/adapters/http", m + "/adapters/store", false},
		{m + "/adapters/connectors/file", m + "/adapters/connectors", true},
		{m + "/adapters/http", m + "/bootstrap", false},
		{m + "/adapters/http", "go.uber.org/fx", false},
		{m + "/adapters/http", "github.com/gin-gonic/gin", true},
		{m + "/bootstrap", "go.uber.org/fx", true},
		{m + "/bootstrap", m + "/adapters/http", true},
	}
	for _, c := range cases {
		why := archcheck.Check(c.pkg, c.imp)
		if c.ok {
			require.Empty(t, why, "%s -> %s", c.pkg, c.imp)
		} else {
			require.NotEmpty(t, why, "%s -> %s should be refused", c.pkg, c.imp)
		}
	}
}
