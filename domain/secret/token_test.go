package secret_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/secret"
)

func TestTokenize(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		text   string
		values []string
		want   string
	}{
		"no values": {"dsn: postgres://u:p@h/db", nil, "dsn: postgres://u:p@h/db"},
		"every occurrence": {
			"password: hunter22\nagain: hunter22", []string{"hunter22"},
			"password: ${sealed:0}\nagain: ${sealed:0}",
		},
		"index is the position in values": {
			"a=tok-aaaa b=tok-bbbb", []string{"tok-bbbb", "tok-aaaa"},
			"a=${sealed:1} b=${sealed:0}",
		},
		"containing value replaced whole": {
			"key: abcd-efgh and abcd", []string{"abcd", "abcd-efgh"},
			"key: ${sealed:1} and ${sealed:0}",
		},
		"contained value later in the longer one": {
			"xx-secret", []string{"secret", "xx-secret"},
			"${sealed:1}",
		},
		"duplicates map to the first index": {
			"v=same", []string{"same", "same"},
			"v=${sealed:0}",
		},
		"absent value": {"nothing here", []string{"zzzz"}, "nothing here"},
		"multibyte":    {"pw: пароль", []string{"пароль"}, "pw: ${sealed:0}"},
		"a value that looks like a token fragment": {
			"sealed sealed", []string{"sealed"}, "${sealed:0} ${sealed:0}",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := secret.Tokenize(tc.text, tc.values)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			back, err := secret.Restore(got, tc.values)
			require.NoError(t, err)
			require.Equal(t, tc.text, back)
		})
	}
}

func TestTokenizeRefusesShortValues(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", "x", "x7q", "пар"} {
		_, err := secret.Tokenize("text abc", []string{"long-enough", v})
		require.ErrorIs(t, err, secret.ErrTooShort, v)
		require.ErrorContains(t, err, "secret value 1 is shorter than 4 characters: secret params must be at least 4 characters long")
		if v != "" && v != "x" {
			require.NotContains(t, err.Error(), v, "the error never repeats the value")
		}
	}
	// Four characters are enough even when they are fewer bytes than some 3-character strings.
	_, err := secret.Tokenize("x", []string{"abcd"})
	require.NoError(t, err)
}

func TestTokenizeRefusesTokensInText(t *testing.T) {
	t.Parallel()
	_, err := secret.Tokenize("password: ${sealed:0}", []string{"hunter22"})
	require.ErrorIs(t, err, secret.ErrTokenInText)
	require.ErrorContains(t, err, "${sealed:N} tokens are written by the server")
}

func TestRestore(t *testing.T) {
	t.Parallel()
	got, err := secret.Restore("a=${sealed:1} b=${sealed:0} c=${sealed:1}", []string{"zero", "one!"})
	require.NoError(t, err)
	require.Equal(t, "a=one! b=zero c=one!", got)

	got, err = secret.Restore("no tokens", nil)
	require.NoError(t, err)
	require.Equal(t, "no tokens", got)

	// A restored value is not scanned again, even if it looks like a token.
	got, err = secret.Restore("${sealed:0}", []string{"${sealed:0}"})
	require.NoError(t, err)
	require.Equal(t, "${sealed:0}", got)

	require.Equal(t, "${sealed:12}", secret.Token(12))
}

func TestRestoreRefuses(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ text, want string }{
		"index past values": {"x ${sealed:2}", "${sealed:2} has no sealed value (the run has 2)"},
		"not a number":      {"x ${sealed:abc}", `"${sealed:abc}" is not a sealed token`},
		"negative":          {"x ${sealed:-1}", `"${sealed:-1}" is not a sealed token`},
		"leading zero":      {"x ${sealed:01}", `"${sealed:01}" is not a sealed token`},
		"empty":             {"x ${sealed:}", `"${sealed:}" is not a sealed token`},
		"unclosed":          {"x ${sealed:1", "without a closing brace"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := secret.Restore(tc.text, []string{"aaaa", "bbbb"})
			require.ErrorIs(t, err, secret.ErrUnknownToken)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
