// Package examples holds the files the README's tour uses — sample data, a pipeline, a
// template, a principals file and a config with mistakes — and is what `sluice init`
// writes, so the README, the tests and a new user's first project are the same files.
package examples
