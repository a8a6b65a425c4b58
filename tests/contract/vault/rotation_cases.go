package vaultcontract

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

func rotationCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a new key with the old as previous opens both and seals with the new": func(t *testing.T, e *env) {
			k1, k2 := newKey(t), newKey(t)
			old, fresh := e.h.New(t, k1), e.h.New(t, k2)
			rotated := e.h.New(t, k2, k1)
			require.Equal(t, fresh.KeyID(), rotated.KeyID(), "the current key names the sealer")
			byOld := e.seal(t, old, owner, purpose, []byte("old "+secretText))
			byRotated := e.seal(t, rotated, owner, purpose, []byte("new "+secretText))
			require.Equal(t, "old "+secretText, string(e.open(t, rotated, owner, purpose, byOld)))
			require.Equal(t, "new "+secretText, string(e.open(t, rotated, owner, purpose, byRotated)))
			require.Equal(t, "new "+secretText, string(e.open(t, fresh, owner, purpose, byRotated)), "sealed with the new key")
			keyMissing(t, openErr(e, old, owner, purpose, byRotated), fresh.KeyID())
			tampered(t, openErr(e, rotated, "run-other", purpose, byOld), "a previous key's ciphertext is bound too")
		},
		"several previous keys, and the current one listed again": func(t *testing.T, e *env) {
			k1, k2, k3 := newKey(t), newKey(t), newKey(t)
			s := e.h.New(t, k3, k3, k2, k1, k2)
			for i, k := range [][]byte{k1, k2, k3} {
				ct := e.seal(t, e.h.New(t, k), owner, purpose, []byte(secretText))
				require.Equal(t, secretText, string(e.open(t, s, owner, purpose, ct)), "key %d", i+1)
			}
			require.Equal(t, e.h.New(t, k3).KeyID(), s.KeyID())
		},
		"rewrap moves a ciphertext from the old key to the new": func(t *testing.T, e *env) {
			k1, k2 := newKey(t), newKey(t)
			old, fresh, rotated := e.h.New(t, k1), e.h.New(t, k2), e.h.New(t, k2, k1)
			byOld := e.seal(t, old, owner, runs.SecretPurpose(3), []byte(secretText))
			moved, changed, err := rotated.Rewrap(e.ctx, owner, runs.SecretPurpose(3), byOld)
			require.NoError(t, err)
			require.True(t, changed)
			noLeakInCiphertext(t, moved)
			require.Equal(t, secretText, string(e.open(t, fresh, owner, runs.SecretPurpose(3), moved)), "the new key alone opens it")
			keyMissing(t, openErr(e, old, owner, runs.SecretPurpose(3), moved), fresh.KeyID())
			tampered(t, openErr(e, fresh, owner, runs.SecretPurpose(4), moved), "still bound to its purpose")
			tampered(t, openErr(e, fresh, "run-other", runs.SecretPurpose(3), moved), "still bound to its owner")

			again, changed, err := rotated.Rewrap(e.ctx, owner, runs.SecretPurpose(3), moved)
			require.NoError(t, err)
			require.False(t, changed, "already under the current key")
			require.Equal(t, moved, again)
		},
		"rewrap refuses what does not open": func(t *testing.T, e *env) {
			k1, k2 := newKey(t), newKey(t)
			rotated := e.h.New(t, k2, k1)
			ct := e.seal(t, e.h.New(t, k1), owner, purpose, []byte(secretText))
			for name, c := range map[string]struct {
				o  string
				ct []byte
			}{
				"changed byte": {owner, flip(ct, len(ct)-1, 0x01)},
				"other owner":  {"run-other", ct},
				"truncated":    {owner, ct[:len(ct)-1]},
			} {
				out, changed, err := rotated.Rewrap(e.ctx, c.o, purpose, c.ct)
				tampered(t, err, name)
				require.False(t, changed, name)
				require.Nil(t, out, name)
			}
			unknown, _ := e.sealer(t)
			out, changed, err := rotated.Rewrap(e.ctx, owner, purpose, e.seal(t, unknown, owner, purpose, []byte(secretText)))
			keyMissing(t, err, unknown.KeyID())
			require.False(t, changed)
			require.Nil(t, out)
		},
	}
}
