// Package vaultcontract is the contract suite of runs.Sealer (SPEC §7.1, §7.5, §7.6),
// plus the Rewrap that `sluice vault rewrap` needs: round trips, key ids, refusal of a
// ciphertext sealed under an unknown key (naming its id), tampering of every byte and of
// the owner/purpose binding, truncation, rotation, nonce uniqueness under concurrency,
// and that no plaintext ever shows in a ciphertext or an error message. Every sealer
// adapter's test calls Run with a Harness.
package vaultcontract
