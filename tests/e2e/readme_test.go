package e2e_test

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/telemetry/otlptest"
	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/testdb"
)

// readmeCommand is one `$ command` of a README block marked ```sh {test}, with the
// output lines the README shows under it and the exit code its comment names (# exit N).
type readmeCommand struct {
	line     int
	command  string
	want     []string
	wantExit int
}

// readmeFile is a block fenced ```LANG {file=NAME}: the whole of examples/NAME.
type readmeFile struct {
	line int
	name string
	text string
}

var (
	exitComment = regexp.MustCompile(`#.*\bexit (\d+)\b`)
	fileFence   = regexp.MustCompile("^```\\w+ \\{file=([^}]+)\\}$")
	// localAddr is an address of the README's own machine: each block gets free ports
	// in its place, so blocks (and other tests) never fight over 8080.
	localAddr = regexp.MustCompile(`\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0):(808\d)\b`)
	// readmeHistory is the PostgreSQL URL the README's cluster block names; the test
	// gives the block a database of its own (SLUICE_TEST_POSTGRES_URL) in its place.
	readmeHistory = "postgres://sluice@db:5432/sluice"
	// readmeCollector is the OTLP receiver the README's Tracing block names; the test
	// gives the block a receiver of its own in its place and checks the trace it got.
	readmeCollector = "http://collector:4318"
	// goRun is how the set-up block starts the server from the checkout; the test runs
	// the binary built from that same checkout in its place (the block runs in a fresh
	// directory, where `go run .` has no module to build).
	goRun       = regexp.MustCompile(`(?m)^go run \. `)
	dataDirFlag = regexp.MustCompile(`--data-dir[ =](\S+)`)
)

// readmeBlocks reads the tested blocks of the README, each a list of commands, and the
// files it shows.
func readmeBlocks(t *testing.T, path string) ([][]readmeCommand, []readmeFile) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var blocks [][]readmeCommand
	var files []readmeFile
	var cur []readmeCommand
	var file *readmeFile
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		switch {
		case file != nil && strings.HasPrefix(text, "```"):
			files = append(files, *file)
			file = nil
		case file != nil:
			file.text += text + "\n"
		case !in && fileFence.MatchString(text):
			file = &readmeFile{line: n, name: fileFence.FindStringSubmatch(text)[1]}
		case !in && strings.HasPrefix(text, "```sh {test}"):
			in, cur = true, nil
		case in && strings.HasPrefix(text, "```"):
			in = false
			blocks = append(blocks, cur)
		case in && len(cur) > 0 && len(cur[len(cur)-1].want) == 0 && strings.HasPrefix(text, "> "):
			// A command continued on the next line (after a \ or inside quotes), as the
			// shell's continuation prompt shows it.
			c := &cur[len(cur)-1]
			c.command += "\n" + strings.TrimPrefix(text, "> ")
			if m := exitComment.FindStringSubmatch(text); m != nil {
				c.wantExit, _ = strconv.Atoi(m[1])
			}
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
	return blocks, files
}

// shownLine turns a line the README shows into a pattern: … stands for anything, and
// two or more spaces (a table's column gap) for two or more, since a column is as wide
// as its widest value (a run id, a port).
func shownLine(s string) *regexp.Regexp {
	parts := strings.Split(s, "…")
	for i, p := range parts {
		parts[i] = columnGap.ReplaceAllString(regexp.QuoteMeta(p), " {2,}")
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

var columnGap = regexp.MustCompile(`  +`)

// Every file the README shows is in examples/, as shown: what a reader copies is what
// `sluice init` writes and what the tested blocks run on.
func TestReadmeFilesAreTheExamples(t *testing.T) {
	t.Parallel()
	_, files := readmeBlocks(t, filepath.Join("..", "..", "README.md"))
	require.NotEmpty(t, files, "the README shows its files fenced ```yaml {file=NAME}")
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("..", "..", "examples", f.name))
		require.NoError(t, err, "README line %d shows %s: it belongs in examples/", f.line, f.name)
		require.Equal(t, string(raw), f.text, "README line %d: %s differs from examples/%s", f.line, f.name, f.name)
	}
}

// TestReadmeBlocksRunAsWritten runs every ```sh {test} block of the README in a fresh
// directory holding the files of examples/, with the built sluice first on PATH, one
// shell per block (so `cd` and `export` carry over), and requires each command's exit
// code and the lines the README shows under it, in order (other lines, such as log
// lines, may come between). A `sluice serve … &` is waited for until its server.json
// appears, and stopped when the block ends; `localhost:8080` (and 8081, …) stand for free
// ports of the block, the README's PostgreSQL URL for a database of the block's own.
func TestReadmeBlocksRunAsWritten(t *testing.T) {
	t.Parallel()
	blocks, _ := readmeBlocks(t, filepath.Join("..", "..", "README.md"))
	require.NotEmpty(t, blocks, "the README marks its runnable blocks ```sh {test}")
	bin := t.TempDir()
	require.NoError(t, os.Symlink(e2e.Bin(t), filepath.Join(bin, "sluice")))
	for i, block := range blocks {
		require.NotEmpty(t, block, "tested block %d has no `$ command` line", i)
		t.Run(fmt.Sprintf("block at line %d", block[0].line), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			copyExamples(t, dir)
			block, collector := localizeBlock(t, block)
			out := runBlock(t, dir, bin, block)
			require.NotContains(t, out, "@@unfinished", "block %d:\n%s", i, out)
			checkBlock(t, block, out)
			if collector != nil {
				// runBlock stopped the servers, and a stop flushes their exporters.
				checkReadmeTrace(t, collector.Spans())
			}
		})
	}
}

// copyExamples puts the example project (not its Go files) into dir.
func copyExamples(t *testing.T, dir string) {
	t.Helper()
	src := filepath.Join("..", "..", "examples")
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), raw, 0o600))
	}
}

// localizeBlock gives the block free ports for the README's local addresses, a database
// of its own for the README's PostgreSQL URL, an OTLP receiver of its own for the README's
// collector (returned, nil when the block names none) and the built binary for `go run .`.
func localizeBlock(t *testing.T, block []readmeCommand) ([]readmeCommand, *otlptest.Receiver) {
	t.Helper()
	ports := map[string]string{}
	history := ""
	var collector *otlptest.Receiver
	sub := func(s string) string {
		if strings.Contains(s, readmeCollector) {
			if collector == nil {
				collector = otlptest.NewReceiver()
				t.Cleanup(collector.Close)
			}
			s = strings.ReplaceAll(s, readmeCollector, collector.URL)
		}
		s = localAddr.ReplaceAllStringFunc(s, func(m string) string {
			host, port, _ := strings.Cut(m, ":")
			if ports[port] == "" {
				_, ports[port], _ = strings.Cut(freeAddr(t), ":")
			}
			return host + ":" + ports[port]
		})
		if strings.Contains(s, readmeHistory) {
			if history == "" {
				history = testdb.Postgres(t)
			}
			s = strings.ReplaceAll(s, readmeHistory, history)
		}
		return s
	}
	out := make([]readmeCommand, len(block))
	for i, c := range block {
		c.command = goRun.ReplaceAllString(sub(c.command), "sluice ")
		want := make([]string, len(c.want))
		for j, w := range c.want {
			want[j] = sub(w)
		}
		c.want = want
		out[i] = c
	}
	// A serve without --listen binds the block's 8080.
	if ports["8080"] == "" {
		_, ports["8080"], _ = strings.Cut(freeAddr(t), ":")
	}
	out[0].command = "export SLUICE_LISTEN=127.0.0.1:" + ports["8080"] + "\n" + out[0].command
	return out, collector
}

// runBlock runs the block's commands in one bash, each between markers that carry its
// exit code, and stops what the block left running in the background.
func runBlock(t *testing.T, dir, bin string, block []readmeCommand) string {
	t.Helper()
	var script strings.Builder
	for j, c := range block {
		command := c.command
		background := strings.HasSuffix(strings.TrimSpace(stripComment(command)), "&") && strings.Contains(command, "sluice serve")
		if background {
			// A server's log would interleave with the output of the commands after it
			// (on a terminal too); it goes to a file of its own, shown when the block fails.
			command = strings.TrimSuffix(strings.TrimSpace(stripComment(command)), "&") + fmt.Sprintf(" >> serve-%d.log 2>&1 &", j)
		}
		// Markers split the output per command; the exit code is kept per command.
		// The end marker starts a line of its own, whether or not the output ended one.
		fmt.Fprintf(&script, "echo '@@begin %d'\n%s\n__rc=$?; printf '\\n@@end %d %%d\\n' $__rc\n", j, command, j)
		if background {
			data := ".sluice"
			if m := dataDirFlag.FindStringSubmatch(c.command); m != nil {
				data = m[1]
			}
			// The README's reader waits for the server to say it is up; the script waits
			// for the file it writes once it listens.
			fmt.Fprintf(&script, "for i in $(seq 1200); do [ -f %s/server.json ] && break; sleep 0.1; done\n", data)
		}
	}
	script.WriteString("echo '@@done'\n")
	// What the servers logged, after the markers, for the failure message.
	script.WriteString("for f in serve-*.log; do [ -f \"$f\" ] && { echo \"--- $f\"; cat \"$f\"; }; done; true\n")
	out, err := os.CreateTemp(t.TempDir(), "block-*.out")
	require.NoError(t, err)
	defer out.Close()
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = dir
	// The reader's shell has no SLUICE_* settings; a developer's exported ones never leak in.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLUICE_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, ".config"))
	// Output goes to a file, not a pipe: a server left in the background keeps its end
	// of a pipe open, and the block would never be read to its end.
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var runErr error
	select {
	case runErr = <-done:
	case <-time.After(5 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		runErr = <-done
	}
	stopGroup(t, dir, cmd.Process.Pid)
	raw, err := os.ReadFile(out.Name())
	require.NoError(t, err)
	require.NoError(t, runErr, "the block:\n%s", raw)
	if !strings.Contains(string(raw), "@@done") {
		return string(raw) + "\n@@unfinished"
	}
	return string(raw)
}

// stopGroup ends what the block started in the background (its servers) the way a
// reader would, with SIGTERM, and waits until their server files are gone.
func stopGroup(t *testing.T, dir string, pgid int) {
	t.Helper()
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
		return // nothing is left
	}
	require.Eventually(t, func() bool {
		found := false
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == "server.json" {
				found = true
			}
			return nil
		})
		return !found
	}, time.Minute, 50*time.Millisecond, "the block's servers stop on SIGTERM")
}

// stripComment drops a trailing `# …` comment (not one inside quotes, which the README's
// commands do not have after a `#`).
func stripComment(c string) string {
	if i := strings.Index(c, " #"); i >= 0 {
		return c[:i]
	}
	return c
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
