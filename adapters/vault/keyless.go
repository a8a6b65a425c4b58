package vault

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/application/runs"
)

var _ runs.Sealer = Keyless{}

// Keyless is the sealer of a member started without --vault-key: it seals nothing, and
// opening reads only the ciphertext's header to name the key it needs, so a claimed
// sealed run fails with vault_key_missing naming that key id (SPEC §7.4) instead of an
// anonymous error.
type Keyless struct{}

// errNoKey refuses sealing: the caller should have refused the request first.
var errNoKey = errors.New("no vault key: start the server with " + flagKey)

// Seal always fails: there is no key to seal with.
func (Keyless) Seal(context.Context, string, runs.Purpose, []byte) ([]byte, error) {
	return nil, errNoKey
}

// Open never decrypts: it returns *runs.VaultKeyMissingError naming the key id of a
// well-formed ciphertext, or runs.ErrVaultTampered for a malformed one.
func (Keyless) Open(_ context.Context, owner string, purpose runs.Purpose, ciphertext []byte) ([]byte, error) {
	if err := checkBinding(owner, purpose); err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	_, err := (&Vault{keys: map[keyID]*key{}}).keyOf(ciphertext)
	if err == nil {
		err = runs.ErrVaultTampered // unreachable: an empty key set knows no id
	}
	return nil, fmt.Errorf("open the sealed %s of %s: %w", purpose, owner, err)
}

// KeyID is empty: there is no current key.
func (Keyless) KeyID() string { return "" }

// FormatMax is 0: this member opens no format.
func (Keyless) FormatMax() int { return 0 }
