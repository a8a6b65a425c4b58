package e2e_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
)

// readmeCommand is one `$ command` of a README block marked ```sh {test}, with the
// output lines the README shows under it and the exit code its comment names (# exit N).
type readmeCommand struct {
	line     int
	command  string
	want     []string
	wantExit int
}

var exitComment = regexp.MustCompile(`#.*\bexit (\d+)\b`)

// readmeBlocks reads the tested blocks of the README, each a list of commands.
func readmeBlocks(t *testing.T, path string) [][]readmeCommand {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var blocks [][]readmeCommand
	var cur []readmeCommand
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		switch {
		case !in && strings.HasPrefix(text, "```sh {test}"):
			in, cur = true, nil
		case in && strings.HasPrefix(text, "```"):
			in = false
			blocks = append(blocks, cur)
		case in && strings.HasPrefix(text, "$ "):
			c := readmeCommand{line: n, command: strings.TrimPrefix(text, "$ ")}
			if m := exitComment.FindStringSubmatch(c.command); m != nil {
				c.wantExit, _ = strconv.Atoi(m[1])
			}
			cur = append(cur, c)
		case in && len(cur) > 0 && strings.TrimSpace(text) != "":
			cur[len(cur)-1].want = append(cur[len(cur)-1].want, text)
		}
	}
	require.NoError(t, sc.Err())
	return blocks
}

// shownLine turns a line the README shows into a pattern: … stands for anything.
func shownLine(s string) *regexp.Regexp {
	parts := strings.Split(s, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// TestReadmeBlocksRunAsWritten runs every ```sh {test} block of the README in a fresh
// directory with the built sluice first on PATH, one shell per block (so `cd` carries
// over), and requires each command's exit code and the lines the README shows under it,
// in order (other lines, such as log lines, may come between).
func TestReadmeBlocksRunAsWritten(t *testing.T) {
	t.Parallel()
	blocks := readmeBlocks(t, filepath.Join("..", "..", "README.md"))
	require.NotEmpty(t, blocks, "the README marks its runnable blocks ```sh {test}")
	bin := t.TempDir()
	require.NoError(t, os.Symlink(e2e.Bin(t), filepath.Join(bin, "sluice")))
	for i, block := range blocks {
		t.Run(fmt.Sprintf("block at line %d", block[0].line), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var script strings.Builder
			for j, c := range block {
				// Markers split the output per command; the exit code is kept per command.
				fmt.Fprintf(&script, "echo '@@begin %d'\n%s\necho \"@@end %d $?\"\n", j, c.command, j)
			}
			cmd := exec.Command("bash", "-c", script.String())
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
				"XDG_CONFIG_HOME="+filepath.Join(dir, ".config"))
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "block %d:\n%s", i, out)
			checkBlock(t, block, string(out))
		})
	}
}

func checkBlock(t *testing.T, block []readmeCommand, out string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	pos := 0
	for j, c := range block {
		begin := fmt.Sprintf("@@begin %d", j)
		for pos < len(lines) && lines[pos] != begin {
			pos++
		}
		require.Less(t, pos, len(lines), "README line %d: %q did not run:\n%s", c.line, c.command, out)
		var got []string
		code := -1
		for pos++; pos < len(lines); pos++ {
			if strings.HasPrefix(lines[pos], fmt.Sprintf("@@end %d ", j)) {
				code, _ = strconv.Atoi(strings.TrimPrefix(lines[pos], fmt.Sprintf("@@end %d ", j)))
				break
			}
			got = append(got, lines[pos])
		}
		require.Equal(t, c.wantExit, code, "README line %d: %q exited %d:\n%s", c.line, c.command, code, strings.Join(got, "\n"))
		k := 0
		for _, w := range c.want {
			re := shownLine(w)
			for k < len(got) && !re.MatchString(got[k]) {
				k++
			}
			require.Less(t, k, len(got), "README line %d: %q does not show %q; it printed:\n%s",
				c.line, c.command, w, strings.Join(got, "\n"))
			k++
		}
	}
}
