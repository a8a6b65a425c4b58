package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"gopkg.in/yaml.v3"
)

// ContextsFile is the file under the user's config directory that holds the contexts.
const ContextsFile = "contexts.yaml"

// Context names a server the CLI talks to, like a kubectl context: its URL and the file
// holding its token (never the token itself, so the file can be shown and shared).
type Context struct {
	Name      string `yaml:"name" json:"name"`
	Server    string `yaml:"server" json:"server"`
	TokenFile string `yaml:"token_file,omitempty" json:"token_file,omitempty"`
}

// contexts is the whole file: the list and the one in use.
type contexts struct {
	Current  string    `yaml:"current,omitempty"`
	Contexts []Context `yaml:"contexts"`
}

func contextsPath(dir string) string { return filepath.Join(dir, ContextsFile) }

// loadContexts reads the file; a missing one is an empty list.
func loadContexts(dir string) (contexts, error) {
	var cs contexts
	if dir == "" {
		return cs, nil
	}
	b, err := os.ReadFile(contextsPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return cs, nil
	}
	if err != nil {
		return cs, err
	}
	if err := yaml.Unmarshal(b, &cs); err != nil {
		return cs, fmt.Errorf("%s is not a contexts file (fix or delete it): %w", contextsPath(dir), err)
	}
	return cs, nil
}

// save writes the file with mode 0600: it names token files, which is nobody else's business.
func (cs contexts) save(dir string) error {
	if dir == "" {
		return errors.New("no config directory: set XDG_CONFIG_HOME or HOME")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := yaml.Marshal(cs)
	if err != nil {
		return err
	}
	return os.WriteFile(contextsPath(dir), b, 0o600)
}

func (cs contexts) find(name string) (Context, bool) {
	i := slices.IndexFunc(cs.Contexts, func(c Context) bool { return c.Name == name })
	if i < 0 {
		return Context{}, false
	}
	return cs.Contexts[i], true
}

func (cs *contexts) put(c Context) {
	i := slices.IndexFunc(cs.Contexts, func(x Context) bool { return x.Name == c.Name })
	if i < 0 {
		cs.Contexts = append(cs.Contexts, c)
		return
	}
	cs.Contexts[i] = c
}

func (cs *contexts) remove(name string) bool {
	n := len(cs.Contexts)
	cs.Contexts = slices.DeleteFunc(cs.Contexts, func(c Context) bool { return c.Name == name })
	if cs.Current == name {
		cs.Current = ""
	}
	return len(cs.Contexts) < n
}

// ConfigDir is where the CLI keeps its own files: $SLUICE_CONFIG_DIR, else
// $XDG_CONFIG_HOME/sluice, else $HOME/.config/sluice ("" when none is set).
func ConfigDir(lookup func(string) (string, bool)) string {
	if v, ok := lookup("SLUICE_CONFIG_DIR"); ok && v != "" {
		return v
	}
	if v, ok := lookup("XDG_CONFIG_HOME"); ok && v != "" {
		return filepath.Join(v, "sluice")
	}
	if v, ok := lookup("HOME"); ok && v != "" {
		return filepath.Join(v, ".config", "sluice")
	}
	return ""
}
