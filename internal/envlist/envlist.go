// Package envlist reads an environment given as a list of NAME=value
// strings, os.Environ's form. The product passes the caller's environment
// down as such a list rather than reading its own, so tests can give one.
//
// A list can define a name twice. Lookup reads the first definition, as
// getenv(3) and os.Getenv do; Map keeps the last, as a shell that imports
// the list in order does.
package envlist

import (
	"sort"
	"strings"
)

// Lookup returns the first value environ gives name, and whether it gives
// one.
func Lookup(environ []string, name string) (string, bool) {
	for _, kv := range environ {
		if n, v, ok := strings.Cut(kv, "="); ok && n == name {
			return v, true
		}
	}
	return "", false
}

// Get is Lookup's value: "" when environ does not define name.
func Get(environ []string, name string) string {
	v, _ := Lookup(environ, name)
	return v
}

// Map indexes environ by name; a name defined twice keeps its last value.
// An entry without "=" is a name with the empty value.
func Map(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		out[name] = value
	}
	return out
}

// Names are the names environ defines, sorted, a name defined twice twice.
func Names(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
