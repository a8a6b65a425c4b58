package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// principalsFile is the example file whose demo tokens `init` replaces.
const principalsFile = "principals.yaml"

// NewInitCommand is `sluice init [DIR]`: it writes the example project (project: sample
// data, a pipeline, a template, a principals file) into DIR, never over an existing file.
func NewInitCommand(project fs.FS) *cobra.Command {
	return &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a runnable example project: sample data, a pipeline, a template and principals",
		Long: "Write the example project into DIR (default: the current directory; created when missing).\n" +
			"Existing files are never overwritten. The principals file gets fresh random tokens.",
		Example: `  sluice init demo && cd demo && sluice run orders.yaml
  sluice init .`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			written, err := writeProject(project, dir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, name := range written {
				fmt.Fprintf(out, "wrote %s\n", filepath.Join(dir, name))
			}
			fmt.Fprintf(out, "next: cd %s && sluice run orders.yaml (see README.md there)\n", dir)
			return nil
		},
	}
}

// writeProject copies every file of project into dir. It checks first that none exists,
// so a refused init writes nothing.
func writeProject(project fs.FS, dir string) ([]string, error) {
	names, err := fs.Glob(project, "*")
	if err != nil {
		return nil, err
	}
	var clash []string
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			clash = append(clash, n)
		}
	}
	if len(clash) > 0 {
		return nil, Usage(fmt.Errorf("%s already has %v: choose another DIR (init never overwrites)", dir, clash))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, Usage(fmt.Errorf("DIR: %w", err))
	}
	for _, n := range names {
		b, err := fs.ReadFile(project, n)
		if err != nil {
			return nil, err
		}
		mode := os.FileMode(0o644)
		if n == principalsFile {
			if b, err = freshTokens(b); err != nil {
				return nil, err
			}
			mode = 0o600
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, mode); err != nil {
			return nil, fmt.Errorf("write %s: %w", n, err)
		}
	}
	return names, nil
}

// freshTokens replaces every example token ("example-…-change-me") with a random one, so
// no two projects share a credential.
func freshTokens(b []byte) ([]byte, error) {
	const prefix, suffix = "example-", "-change-me"
	var out bytes.Buffer
	for {
		i := bytes.Index(b, []byte(prefix))
		if i < 0 {
			out.Write(b)
			return out.Bytes(), nil
		}
		j := bytes.Index(b[i:], []byte(suffix))
		if j < 0 {
			return nil, errors.New("principals.yaml: an example token has no end marker")
		}
		var r [24]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		out.Write(b[:i])
		out.WriteString(hex.EncodeToString(r[:]))
		b = b[i+j+len(suffix):]
	}
}
