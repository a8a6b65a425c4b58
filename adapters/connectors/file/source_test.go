package file_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/file"
	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func readPages(t *testing.T, c *file.Connector, req execute.ReadRequest) ([]*execute.Page, error) {
	t.Helper()
	return conntest.ReadAll(c, req)
}

func allRows(pages []*execute.Page) [][]any {
	return conntest.AllRows(pages)
}

func TestCSVRaggedRowNamesFileAndLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "r.csv", "a,b,c\n1,2,3\n\"multi\nline\",5,6\n7,8\n")
	_, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "r.csv"}, BaseDir: dir})
	require.EqualError(t, err, "file: "+filepath.Join(dir, "r.csv")+" line 5: row has 2 fields, the header has 3")
}

func TestCSVValuesStayText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "v.csv", "\ufeffid,name,empty\n1,\"a, \"\"b\"\"\",\n")
	pages, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "v.csv"}, BaseDir: dir})
	require.NoError(t, err)
	require.Equal(t, []string{"id", "name", "empty"}, pages[0].Columns, "a byte-order mark is not part of the first column")
	require.Equal(t, [][]any{{"1", `a, "b"`, ""}}, pages[0].Rows)
}

func TestCSVDelimiterAndNoHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "t.txt", "1;x\n2;y\n")
	pages, err := readPages(t, file.New(), execute.ReadRequest{
		Config: map[string]any{"path": "t.txt", "format": "csv", "delimiter": ";", "header": false}, BaseDir: dir})
	require.NoError(t, err)
	require.Equal(t, []string{"col1", "col2"}, pages[0].Columns)
	require.Equal(t, [][]any{{"1", "x"}, {"2", "y"}}, pages[0].Rows)
}

func TestCSVDuplicateHeaderRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "d.csv", "a,b,a\n1,2,3\n")
	_, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "d.csv"}, BaseDir: dir})
	require.ErrorContains(t, err, `column 3 of the header repeats an earlier column's name`)
}

// SPEC §14.1: a run's error never quotes row data. A file read as the CSV or JSON lines
// it is not — a password file, the process environment — must not publish its first
// line or its values through the error.
func TestDecodeErrorsNeverQuoteTheData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "passwd.csv", "root:x:0:0:root-secret:/root:/bin/bash\nroot:x:0:0:root-secret:/root:/bin/bash\n")
	_, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "passwd.csv"}, BaseDir: dir,
		Incremental: &execute.Incremental{Cursor: "id"}})
	require.ErrorContains(t, err, `cursor column "id" is not one of the 1 columns of the header`)
	require.NotContains(t, err.Error(), "root-secret")

	write(t, dir, "env.jsonl", `{"SLUICE_VAULT_KEY": 12345678901234567890e99999}`+"\n")
	_, err = readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "env.jsonl"}, BaseDir: dir})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "12345678901234567890")
	write(t, dir, "env2.jsonl", `{"TOKEN": 0777-secret}`+"\n")
	_, err = readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "env2.jsonl"}, BaseDir: dir})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "0777")
}

func TestGlobReadsFilesInSortedOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "b.csv", "id\n3\n4\n")
	write(t, dir, "a.csv", "id\n1\n2\n")
	write(t, dir, "c.csv", "id\n5\n")
	write(t, dir, "skip.txt", "id\n99\n")
	pages, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "*.csv", "batch_size": 3}, BaseDir: dir})
	require.NoError(t, err)
	require.Equal(t, [][]any{{"1"}, {"2"}, {"3"}, {"4"}, {"5"}}, allRows(pages))
	require.Len(t, pages, 2, "pages span files")
}

func TestGlobWithDifferentHeadersUnionsColumns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "1.csv", "id,a\n1,x\n")
	write(t, dir, "2.csv", "id,b\n2,y\n")
	pages, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "*.csv"}, BaseDir: dir})
	require.NoError(t, err)
	require.Equal(t, []string{"id", "a", "b"}, pages[0].Columns)
	require.Equal(t, [][]any{{"1", "x", nil}, {"2", nil, "y"}}, pages[0].Rows)
}

func TestPathErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "x.json", "{}\n")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	cases := []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"missing file", map[string]any{"path": "nope.csv"}, "no such file or directory"},
		{"no glob match", map[string]any{"path": "*.csv"}, "file: no files match " + filepath.Join(dir, "*.csv")},
		{"unknown extension", map[string]any{"path": "x.json"}, "set format: csv, jsonl or parquet"},
		{"unknown format", map[string]any{"path": "x.json", "format": "xml"}, `unknown format "xml"`},
		{"directory", map[string]any{"path": "sub", "format": "csv"}, "is a directory"},
		{"bad delimiter", map[string]any{"path": "x.json", "format": "csv", "delimiter": ";;"}, "delimiter must be one character"},
		{"missing path", map[string]any{}, `"path" is required`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := readPages(t, file.New(), execute.ReadRequest{Config: tc.cfg, BaseDir: dir})
			require.ErrorContains(t, err, tc.want)
			require.True(t, strings.HasPrefix(err.Error(), "file: "), err.Error())
		})
	}
}

func TestHTTPSource(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/data.csv":
			fmt.Fprint(w, "id,name\n1,a\n2,b\n")
		case "/moved.csv":
			http.Redirect(w, r, "/data.csv", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()
	c := file.New(file.WithHTTPClient(srv.Client()))

	pages, err := readPages(t, c, execute.ReadRequest{Config: map[string]any{"path": srv.URL + "/data.csv"}})
	require.NoError(t, err)
	require.Equal(t, [][]any{{"1", "a"}, {"2", "b"}}, allRows(pages))

	secret := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1) + "/missing.csv?token=s3cr3t"
	_, err = readPages(t, c, execute.ReadRequest{Config: map[string]any{"path": secret}})
	require.ErrorContains(t, err, "HTTP status 404 Not Found")
	require.ErrorContains(t, err, "/missing.csv")
	require.NotContains(t, err.Error(), "hunter2")
	require.NotContains(t, err.Error(), "s3cr3t")

	refused := file.New(file.WithHTTPClient(srv.Client()), file.WithURLCheck(func(_ context.Context, u *url.URL) error {
		if u.Path == "/data.csv" {
			return errors.New("host not allowed")
		}
		return nil
	}))
	_, err = readPages(t, refused, execute.ReadRequest{Config: map[string]any{"path": srv.URL + "/moved.csv"}})
	require.ErrorContains(t, err, "host not allowed", "redirect targets are checked too")
	_, err = readPages(t, refused, execute.ReadRequest{Config: map[string]any{"path": srv.URL + "/data.csv"}})
	require.ErrorContains(t, err, "host not allowed")
}

func TestHTTPUnreachableRedactsURL(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	_, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{
		"path": strings.Replace(u, "http://", "http://bob:pw123@", 1) + "/x.csv?sig=abc"}})
	require.Error(t, err)
	require.Contains(t, err.Error(), "file: GET http://REDACTED@")
	require.NotContains(t, err.Error(), "pw123")
	require.NotContains(t, err.Error(), "sig=abc")
}

func TestHTTPCancelDuringBody(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "id\n")
		for i := range 5 {
			fmt.Fprintf(w, "%d\n", i)
		}
		w.(http.Flusher).Flush()
		select { // hold the body open until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	src, err := file.New(file.WithHTTPClient(srv.Client())).OpenSource(context.Background(),
		execute.ReadRequest{Config: map[string]any{"path": srv.URL + "/slow.csv", "batch_size": 100}})
	require.NoError(t, err)
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = src.Next(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestIncrementalUnsortedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "u.csv", "id,v\n9,a\n10,b\n2,c\n11,d\n7,e\n")
	read := func(after any) []*execute.Page {
		inc := &execute.Incremental{Cursor: "id"}
		if after != nil {
			inc.After = &state.Bookmark{Cursor: "id", Value: after}
		}
		pages, err := readPages(t, file.New(), execute.ReadRequest{
			Config: map[string]any{"path": "u.csv", "batch_size": 2}, BaseDir: dir, Incremental: inc})
		require.NoError(t, err)
		return pages
	}
	pages := read(nil)
	require.Len(t, pages, 3)
	require.Nil(t, pages[0].Bookmark, "only the last page of an unsorted file may advance the bookmark")
	require.Nil(t, pages[1].Bookmark)
	require.Equal(t, &state.Bookmark{Cursor: "id", Value: "11"}, pages[2].Bookmark, "numeric comparison: 11 > 9")

	pages = read(int64(8))
	require.Equal(t, [][]any{{"9", "a"}, {"10", "b"}, {"11", "d"}}, allRows(pages))
	require.Equal(t, "11", pages[len(pages)-1].Bookmark.Value)
	require.Empty(t, read("11"))
}

func TestIncrementalTextCursorAndMissingColumn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "s.jsonl", `{"k":"b"}`+"\n"+`{"k":"a"}`+"\n"+`{"other":1}`+"\n"+`{"k":"c"}`+"\n")
	pages, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "s.jsonl"}, BaseDir: dir,
		Incremental: &execute.Incremental{Cursor: "k", After: &state.Bookmark{Value: "a"}}})
	require.NoError(t, err)
	require.Equal(t, [][]any{{"b"}, {"c"}}, allRows(pages), "rows without the cursor are not past a bookmark")
	require.Equal(t, "c", pages[0].Bookmark.Value)

	write(t, dir, "n.csv", "a\n1\n")
	_, err = readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "n.csv"}, BaseDir: dir,
		Incremental: &execute.Incremental{Cursor: "id"}})
	require.ErrorContains(t, err, `cursor column "id" is not one of the 1 columns of the header`)
}
