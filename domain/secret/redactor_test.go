package secret_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/secret"
)

// pw has characters that every encoding changes: space, quote, slash, plus, ampersand,
// angle bracket, non-ASCII.
const pw = `p@ss w"rd/+&<é>`

func TestRedactForms(t *testing.T) {
	t.Parallel()
	r := secret.NewRedactor()
	r.Register(pw)
	jsonEscaped, err := json.Marshal(pw)
	require.NoError(t, err)
	forms := map[string]string{
		"raw":              pw,
		"query-escaped":    url.QueryEscape(pw),
		"path-escaped":     url.PathEscape(pw),
		"json-escaped":     string(jsonEscaped[1 : len(jsonEscaped)-1]),
		"json, no html":    `p@ss w\"rd/+&<é>`,
		"base64 std":       base64.StdEncoding.EncodeToString([]byte(pw)),
		"base64 std raw":   base64.RawStdEncoding.EncodeToString([]byte(pw)),
		"base64 url":       base64.URLEncoding.EncodeToString([]byte(pw)),
		"base64 url raw":   base64.RawURLEncoding.EncodeToString([]byte(pw)),
		"basic auth value": base64.StdEncoding.EncodeToString([]byte("admin:" + pw)),
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := r.Redact("before " + form + " after")
			require.NotContains(t, got, form)
			require.True(t, strings.HasPrefix(got, "before "), got)
			require.True(t, strings.HasSuffix(got, " after"), got)
			require.Contains(t, got, secret.Mask)
		})
	}
}

func TestRedactBase64AtEveryOffset(t *testing.T) {
	t.Parallel()
	r := secret.NewRedactor()
	const v = "s3cr3t-token-value"
	r.Register(v)
	for prefix := range 6 {
		blob := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", prefix) + v + "tail"))
		got := r.Redact(blob)
		require.NotEqual(t, blob, got, "offset %d", prefix)
		// What is left is too little to rebuild the value: at most the edge characters
		// that mix in neighbouring bytes.
		decoded, _ := base64.StdEncoding.DecodeString(strings.ReplaceAll(got, secret.Mask, ""))
		require.NotContains(t, string(decoded), v)
	}
}

func TestRedactLongestFirst(t *testing.T) {
	t.Parallel()
	r := secret.NewRedactor()
	r.Register("abcd", "abcd-efgh")
	require.Equal(t, "k=*** j=***", r.Redact("k=abcd-efgh j=abcd"))
}

// A member redacts every log line of every run, and nearly none holds a secret: such a
// line comes back as it was, without a copy. Not parallel: AllocsPerRun counts the whole
// process's allocations.
func TestRedactLeavesACleanLineUncopied(t *testing.T) {
	r := secret.NewRedactor()
	r.Register("hunter22", "swordfish")
	line := "wrote 120 rows in 3 pages"
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = r.Redact(line) }))
	cases := map[string]string{
		"":                              "",
		"hunter22":                      "***",
		"hunter22swordfish":             "******",
		"a hunter22 b swordfish c":      "a *** b *** c",
		"x=hunter22 y=hunter22 at end":  "x=*** y=*** at end",
		"swordfish at the start, clean": "*** at the start, clean",
	}
	for in, want := range cases {
		require.Equal(t, want, r.Redact(in), in)
	}
}

func TestRegisterIgnoresShortValues(t *testing.T) {
	t.Parallel()
	r := secret.NewRedactor()
	r.Register("", "a", "ab", "abc", "defg")
	require.Equal(t, "a ab abc ***", r.Redact("a ab abc defg"))
	var zero secret.Redactor // the zero value works too
	zero.Register("defg")
	require.Equal(t, "***", zero.Redact("defg"))
	require.Equal(t, "nothing registered", (&secret.Redactor{}).Redact("nothing registered"))
}

func TestMaskUserinfo(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"postgres://user:pw@host/db":                    "postgres://user:***@host/db",
		"dsn=postgresql://u:p%40ss@db:5432/x?ssl=1":     "dsn=postgresql://u:***@db:5432/x?ssl=1",
		"redis://:sekrit@cache:6379":                    "redis://:***@cache:6379",
		"mysql://u:p@ss@host":                           "mysql://u:***@host",
		"a https://x:y@h1 and s3://k:v@h2/p":            "a https://x:***@h1 and s3://k:***@h2/p",
		`{"url":"amqp://guest:guest@mq:5672/"}`:         `{"url":"amqp://guest:***@mq:5672/"}`,
		"user only: https://token@github.com/x":         "user only: https://token@github.com/x",
		"no userinfo: https://example.com/a?b=c:d@e":    "no userinfo: https://example.com/a?b=c:d@e",
		"port only: http://localhost:8080/":             "port only: http://localhost:8080/",
		"already masked: postgres://u:***@h":            "already masked: postgres://u:***@h",
		"empty password: postgres://u:@h":               "empty password: postgres://u:***@h",
		"quoted 'postgres://u:pw@h' end":                "quoted 'postgres://u:***@h' end",
		"no scheme user:pw@host":                        "no scheme user:pw@host",
		"dangling ://":                                  "dangling ://",
		"two on a line: x://a:b@c,y://d:e@f":            "two on a line: x://a:***@c,y://d:***@f",
		"mixed: postgres://u:pw@h:5432 then more text ": "mixed: postgres://u:***@h:5432 then more text ",
	}
	r := secret.NewRedactor()
	for in, want := range cases {
		require.Equal(t, want, secret.MaskUserinfo(in), in)
		require.Equal(t, want, r.Redact(in), in)
	}
}

func TestRedactorConcurrency(t *testing.T) {
	t.Parallel()
	r := secret.NewRedactor()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				r.Register(fmt.Sprintf("secret-%d-%d", w, i))
			}
		})
		wg.Go(func() {
			for i := range 200 {
				_ = r.Redact(fmt.Sprintf("line %d with secret-%d-%d and postgres://u:p@h", i, w, i))
			}
		})
	}
	wg.Wait()
	for w := range 4 {
		require.Equal(t, "x *** y", r.Redact(fmt.Sprintf("x secret-%d-199 y", w)))
	}
}
