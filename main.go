// Command sluice runs data pipelines and serves the run control plane.
package main

import (
	"os"

	"github.com/sluicehq/sluice/bootstrap"
)

func main() { os.Exit(bootstrap.Main(os.Args)) }
