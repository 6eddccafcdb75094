//go:build mage

// Task targets: `go run github.com/magefile/mage -l` lists them. They are the
// exported functions of package targets, an ordinary tested package.
package main

import (
	_ "github.com/magefile/mage/mg" // pins mage in go.mod for `go run github.com/magefile/mage`

	//mage:import
	_ "github.com/claude-sandbox/claude-sandbox/magefiles/targets"
)
