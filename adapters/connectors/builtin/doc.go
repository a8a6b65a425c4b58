// Package builtin assembles the registry of every connector this version ships (file,
// generate, sqlite, stdout). It is the only package that imports them all, so the
// registry package itself stays free of connector dependencies.
package builtin
