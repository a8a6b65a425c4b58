package bootstrap

import (
	"os"
	"path/filepath"

	"github.com/sluicehq/sluice/application/execute"
)

// osEnvironment is what config directives read in this process: its environment
// variables (through lookup, so tests and the CLI agree on one source) and its files.
type osEnvironment struct {
	lookup func(string) (string, bool)
}

var (
	_ execute.Environment     = osEnvironment{}
	_ execute.SymlinkResolver = osEnvironment{}
)

func (e osEnvironment) LookupEnv(name string) (string, bool) { return e.lookup(name) }

func (osEnvironment) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

func (osEnvironment) EvalSymlinks(path string) (string, error) { return filepath.EvalSymlinks(path) }
