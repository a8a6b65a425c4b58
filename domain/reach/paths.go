package reach

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// systemTrees are refused whatever --allow-path says: they expose the process's
// environment, memory and devices as files.
var systemTrees = []string{"/proc", "/sys", "/dev"}

// historySidecars are the files SQLite keeps next to a database.
var historySidecars = []string{"-wal", "-shm", "-journal"}

// Paths decides which real paths a served config's connectors may open. Every path it
// is given and every path it judges is absolute, cleaned and has its symlinks evaluated
// (the caller's I/O); it never touches the filesystem.
type Paths struct {
	allow   []string // --allow-path directories, in flag order
	dataDir string   // refused except where an allowed directory lies inside it
	files   map[string]string
	history string // the SQLite history file; "" for other histories
}

// PathFile is a file refused by name, with the flag that names it.
type PathFile struct {
	Path string
	Flag string // e.g. --auth-config
}

// NewPaths builds the path rules. allow are the allowed directories (the first resolves
// relative paths); dataDir is the server's data directory; files are the files named
// by --auth-config and every other --*-file flag; history is the SQLite history file
// ("" when the history is not a file).
func NewPaths(allow []string, dataDir string, files []PathFile, history string) Paths {
	p := Paths{allow: slices.Clone(allow), dataDir: dataDir, history: history, files: map[string]string{}}
	for _, f := range files {
		if f.Path != "" {
			p.files[f.Path] = f.Flag
		}
	}
	return p
}

// Base is the directory relative paths resolve against: the first allowed directory.
func (p Paths) Base() string {
	if len(p.allow) == 0 {
		return ""
	}
	return p.allow[0]
}

// Allowed lists the allowed directories.
func (p Paths) Allowed() []string { return slices.Clone(p.allow) }

// Check judges real, the resolved path key names. A refusal wraps ErrHistoryRefused for
// the history and its sidecar files, ErrPathRefused otherwise.
func (p Paths) Check(key, real string) error {
	refuse := func(kind error, reason string, a ...any) error {
		return &RefusedError{Kind: kind, Key: key, Target: real, Reason: fmt.Sprintf(reason, a...)}
	}
	if !filepath.IsAbs(real) || filepath.Clean(real) != real {
		return refuse(ErrPathRefused, "not a clean absolute path")
	}
	if p.isHistory(real) {
		return refuse(ErrHistoryRefused, "it is the server's own history database, which no connector may read or write whatever --allow-path says")
	}
	if flag, ok := p.files[real]; ok {
		return refuse(ErrPathRefused, "it is the file of %s, which no connector may open whatever --allow-path says", flag)
	}
	for _, t := range systemTrees {
		if within(t, real) {
			return refuse(ErrPathRefused, "%s is never reachable by a served config, whatever --allow-path says", t)
		}
	}
	if p.dataDir != "" && within(p.dataDir, real) && !p.inAllowedDataSubdir(real) {
		return refuse(ErrPathRefused, "it lies in the server's data directory %s (tokens, locks, history), which stays closed except for an --allow-path directory inside it", p.dataDir)
	}
	for _, d := range p.allow {
		if within(d, real) {
			return nil
		}
	}
	return refuse(ErrPathRefused, "it is outside the allowed directories (%s); add a directory with --allow-path", strings.Join(p.allow, ", "))
}

func (p Paths) isHistory(real string) bool {
	if p.history == "" {
		return false
	}
	if real == p.history {
		return true
	}
	for _, s := range historySidecars {
		if real == p.history+s {
			return true
		}
	}
	return false
}

// inAllowedDataSubdir reports whether real lies in an allowed directory strictly inside
// the data directory (the default <data-dir>/files). Allowing the data directory itself,
// or a parent of it, opens nothing inside it.
func (p Paths) inAllowedDataSubdir(real string) bool {
	for _, d := range p.allow {
		if d != p.dataDir && within(p.dataDir, d) && within(d, real) {
			return true
		}
	}
	return false
}

// within reports whether path is dir or lies below it; both are clean and absolute.
func within(dir, path string) bool {
	if dir == path || dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}
