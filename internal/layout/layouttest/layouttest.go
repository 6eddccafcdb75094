// Package layouttest is the one test seam of the installed layout: the
// harnesses that run the product as a separate process (the testscripts'
// commands, the benchmarks' launcher) point its paths at temporary files
// through CS_* variables. Only test binaries import it; the product reads
// no such variable (TestImports keeps it out of the shipped binary).
package layouttest

import (
	"os"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// FromEnv is layout.Installed with each field a set, non-empty CS_*
// variable names replaced. List variables (CS_MASKS, CS_BWRAP_PATHS) are
// colon-separated.
func FromEnv() layout.Layout {
	l := layout.Installed()
	for name, field := range map[string]*string{
		"CS_CONF":              &l.Conf,
		"CS_REAL":              &l.RealBinary,
		"CS_PASSWD":            &l.Passwd,
		"CS_ALLOW_UNSANDBOXED": &l.AllowUnsandboxed,
		"CS_OUTSIDE_SETTINGS":  &l.OutsideSettings,
		"CS_INSIDE_SETTINGS":   &l.InsideSettings,
	} {
		if v := os.Getenv(name); v != "" {
			*field = v
		}
	}
	for name, field := range map[string]*[]string{
		"CS_MASKS":       &l.Masks,
		"CS_BWRAP_PATHS": &l.Bwrap,
	} {
		if v := os.Getenv(name); v != "" {
			*field = strings.Split(v, ":")
		}
	}
	return l
}
