package vault_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/vault"
)

func TestParseKeyAcceptsEveryBase64Form(t *testing.T) {
	t.Parallel()
	k := []byte("0123456789abcdef0123456789ab>?~\xff")
	require.Len(t, k, vault.KeySize)
	for name, s := range map[string]string{
		"std":          base64.StdEncoding.EncodeToString(k),
		"url":          base64.URLEncoding.EncodeToString(k),
		"raw std":      base64.RawStdEncoding.EncodeToString(k),
		"raw url":      base64.RawURLEncoding.EncodeToString(k),
		"with newline": base64.StdEncoding.EncodeToString(k) + "\n",
		"with blanks":  "  " + base64.StdEncoding.EncodeToString(k) + "\t",
	} {
		got, err := vault.ParseKey(s)
		require.NoError(t, err, name)
		require.Equal(t, k, got, name)
	}
}

func TestParseKeyRefusals(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ in, want string }{
		"empty":         {"", "is empty"},
		"blank":         {"  \n", "is empty"},
		"not base64":    {"not*a*key!not*a*key!not*a*key!not*a*key!!!!", "is not base64"},
		"16 bytes":      {base64.StdEncoding.EncodeToString(make([]byte, 16)), "decodes to 16 bytes, want 32"},
		"31 bytes":      {base64.StdEncoding.EncodeToString(make([]byte, 31)), "decodes to 31 bytes, want 32"},
		"33 bytes":      {base64.RawURLEncoding.EncodeToString(make([]byte, 33)), "decodes to 33 bytes, want 32"},
		"hex, 64 chars": {strings.Repeat("ab", 32), "decodes to 48 bytes, want 32"},
	} {
		got, err := vault.ParseKey(c.in)
		require.Nil(t, got, name)
		require.ErrorContains(t, err, c.want, name)
		require.ErrorContains(t, err, "--vault-key", name)
		require.ErrorContains(t, err, "--vault-previous-key", name)
		if strings.TrimSpace(c.in) != "" {
			require.NotContains(t, err.Error(), strings.TrimSpace(c.in), "%s: the message quotes the key", name)
		}
	}
}

func TestFromBase64NamesTheFlag(t *testing.T) {
	t.Parallel()
	good, err := vault.GenerateKey()
	require.NoError(t, err)
	short := base64.StdEncoding.EncodeToString(make([]byte, 8))

	_, err = vault.FromBase64(short, good)
	require.ErrorContains(t, err, "--vault-key: decodes to 8 bytes, want 32")
	require.NotContains(t, err.Error(), "previous")

	_, err = vault.FromBase64(good, good, "")
	require.ErrorContains(t, err, "--vault-previous-key (value 2 of 2): is empty")

	_, err = vault.FromBase64(good, short)
	require.ErrorContains(t, err, "--vault-previous-key (value 1 of 1): decodes to 8 bytes")
	require.NotContains(t, err.Error(), short)

	v, err := vault.FromBase64(good, good)
	require.NoError(t, err)
	raw, err := vault.ParseKey(good)
	require.NoError(t, err)
	same, err := vault.New(raw)
	require.NoError(t, err)
	require.Equal(t, same.KeyID(), v.KeyID())
}

func TestGenerateKey(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 50 {
		s, err := vault.GenerateKey()
		require.NoError(t, err)
		raw, err := base64.StdEncoding.DecodeString(s)
		require.NoError(t, err, "standard base64")
		require.Len(t, raw, vault.KeySize)
		require.False(t, seen[s], "keys repeat")
		seen[s] = true
		_, err = vault.New(raw)
		require.NoError(t, err)
	}
}
