package examples

import (
	"embed"
	"io/fs"
)

// files is embedded so `sluice init` works from the binary alone.
//
//go:embed *.csv *.yaml README.md
var files embed.FS

// Files returns the example project, read-only.
func Files() fs.FS { return files }
