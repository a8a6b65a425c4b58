package vault_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/vault"
	"github.com/sluicehq/sluice/application/runs"
	vaultcontract "github.com/sluicehq/sluice/tests/contract/vault"
)

func TestContract(t *testing.T) {
	t.Parallel()
	vaultcontract.Run(t, vaultcontract.Harness{
		New: func(t *testing.T, current []byte, previous ...[]byte) vaultcontract.Sealer {
			t.Helper()
			v, err := vault.New(current, previous...)
			require.NoError(t, err)
			return v
		},
		KeyID: vaultcontract.Range{From: 1, To: 9},
		Nonce: vaultcontract.Range{From: 9, To: 21},
	})
}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, vault.KeySize) }

func TestFormatOne(t *testing.T) {
	t.Parallel()
	k := key(7)
	v, err := vault.New(k)
	require.NoError(t, err)
	sum := sha256.Sum256(k)
	require.Equal(t, hex.EncodeToString(sum[:8]), v.KeyID(), "the id is the first 8 bytes of SHA-256 of the key")
	require.Equal(t, 1, v.FormatMax())

	ct, err := v.Seal(context.Background(), "run-1", runs.PurposeConfig, []byte("hello"))
	require.NoError(t, err)
	require.Len(t, ct, vault.Overhead+5)
	require.Equal(t, 37, vault.Overhead, "version 1 + key id 8 + nonce 12 + tag 16")
	require.Equal(t, byte(1), ct[0], "format version")
	require.Equal(t, sum[:8], ct[1:9], "key id")

	// The wire format is pinned: plain AES-256-GCM over nonce|body|tag with the header
	// and the length-prefixed owner and purpose as additional data, so members of other
	// releases keep opening what this one sealed.
	block, err := aes.NewCipher(k)
	require.NoError(t, err)
	gcm, err := cipher.NewGCM(block)
	require.NoError(t, err)
	ad := append([]byte{1}, sum[:8]...)
	ad = append(append(ad, 5), "run-1"...)
	ad = append(append(ad, 6), "config"...)
	got, err := gcm.Open(nil, ct[9:21], ct[21:], ad)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
}

func TestTruncationIsTamperingWhateverTheKeyID(t *testing.T) {
	t.Parallel()
	v, err := vault.New(key(1))
	require.NoError(t, err)
	// Version 1 and an id no key has, but shorter than any ciphertext: cut, not foreign.
	short := append([]byte{1}, bytes.Repeat([]byte{0xee}, 8+12+15)...)
	_, err = v.Open(context.Background(), "o", runs.PurposeConfig, short)
	require.ErrorIs(t, err, runs.ErrVaultTampered)
	require.NotErrorIs(t, err, runs.ErrVaultKeyMissing)
	require.ErrorContains(t, err, "truncated (36 bytes, at least 37)")
	// One byte more and it is a well-formed ciphertext of an unknown key.
	_, err = v.Open(context.Background(), "o", runs.PurposeConfig, append(short, 0))
	var missing *runs.VaultKeyMissingError
	require.ErrorAs(t, err, &missing)
	require.Equal(t, "eeeeeeeeeeeeeeee", missing.KeyID)
}

func TestNewRefusesKeysOfTheWrongSize(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		current  []byte
		previous [][]byte
		want     string
	}{
		"short current":  {key(1)[:16], nil, "--vault-key: a vault key is 32 bytes, got 16"},
		"long current":   {append(key(1), 0), nil, "--vault-key: a vault key is 32 bytes, got 33"},
		"nil current":    {nil, nil, "--vault-key: a vault key is 32 bytes, got 0"},
		"short previous": {key(1), [][]byte{key(2), key(3)[:31]}, "--vault-previous-key (value 2 of 2): a vault key is 32 bytes, got 31"},
		"empty previous": {key(1), [][]byte{{}}, "--vault-previous-key (value 1 of 1): a vault key is 32 bytes, got 0"},
	} {
		v, err := vault.New(c.current, c.previous...)
		require.Nil(t, v, name)
		require.ErrorContains(t, err, c.want, name)
		require.ErrorContains(t, err, "sluice keygen", name)
	}
}

func TestNewKeepsNoKeyBytesInSight(t *testing.T) {
	t.Parallel()
	k := key(0xab)
	v, err := vault.New(k)
	require.NoError(t, err)
	k[0] = 0 // the caller wipes its copy; the vault built its cipher already
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("started", "vault", v)
	for _, printed := range []string{v.String(), fmt.Sprint(v), fmt.Sprintf("%v", v), buf.String()} {
		require.Contains(t, printed, v.KeyID())
		require.NotContains(t, printed, "abab")
	}

	ct, err := v.Seal(context.Background(), "o", runs.PurposeSecret, []byte("x"))
	require.NoError(t, err)
	other, err := vault.New(key(0xab))
	require.NoError(t, err)
	got, err := other.Open(context.Background(), "o", runs.PurposeSecret, ct)
	require.NoError(t, err, "wiping the caller's key bytes after New changes nothing")
	require.Equal(t, "x", string(got))
}

func TestUnknownFormatVersionIsTampered(t *testing.T) {
	t.Parallel()
	v, err := vault.New(key(1))
	require.NoError(t, err)
	ct, err := v.Seal(context.Background(), "o", runs.PurposeConfig, []byte("x"))
	require.NoError(t, err)
	ct[0] = 2
	_, err = v.Open(context.Background(), "o", runs.PurposeConfig, ct)
	require.ErrorIs(t, err, runs.ErrVaultTampered)
	require.ErrorContains(t, err, "unknown format version 2 (this member opens formats up to 1)")
}
