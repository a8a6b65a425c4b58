// Package vault is the sealer of the history (SPEC §7): AES-256-GCM under the operator's
// --vault-key, with key ids and rotation through --vault-previous-key. It implements
// runs.Sealer, parses and generates keys (`sluice keygen`) and re-seals old ciphertexts
// under the current key (Rewrap, for `sluice vault rewrap`).
//
// A ciphertext (format 1) is laid out as
//
//	version (1 byte) | key id (8 bytes) | nonce (12 bytes) | GCM ciphertext and tag (16 bytes)
//
// The key id is the first 8 bytes of SHA-256 of the key: every member started with the
// same key computes the same id, and the id tells nothing about the key. The additional
// authenticated data is the version and key id followed by the owner id and the purpose,
// each prefixed with its length, so neither the header nor the binding can change (or be
// shifted from owner to purpose) without Open failing.
//
// The Vault keeps no raw key bytes, only the ciphers built from them.
package vault
