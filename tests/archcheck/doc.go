// Package archcheck enforces the dependency rule of ARCHITECTURE.md as a test, so a
// forbidden import fails the build instead of waiting for review:
// domain ← application ← adapters ← bootstrap, adapters never import each other, and
// only bootstrap imports go.uber.org/fx.
package archcheck
