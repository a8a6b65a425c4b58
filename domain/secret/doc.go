// Package secret owns what keeps secret values out of everything the server stores and
// prints (SPEC §7.2, §7.6): replacing secret param values in a config by ${sealed:N}
// tokens and putting them back, the lifecycle of a sealed secret, and the Redactor (with
// its slog handler) that masks registered values in every form they tend to leak in,
// plus the password of any URL userinfo.
//
// Encryption itself is an adapter (adapters/vault); this package never sees a key.
package secret
