package features

import (
	_ "embed"
	"encoding/json"
)

// embedded is the feature's copy of the metadata, which TestCopyMatchesSource
// keeps byte for byte equal to the source.
//
//go:embed src/claude-sandbox/devcontainer-feature.json
var embedded []byte

// Embedded is the metadata this binary was built with: the version promote
// pins a repository to. The file is checked at build by the tests, so a
// parse failure here is a broken build.
func Embedded() Metadata {
	var m Metadata
	if err := json.Unmarshal(embedded, &m); err != nil {
		panic("features: the embedded devcontainer-feature.json does not parse: " + err.Error())
	}
	return m
}

// Option is one of the feature's options, as its metadata declares it.
type Option struct {
	Type    string   `json:"type"`
	Default any      `json:"default"` // a string or a bool, as Type says
	Enum    []string `json:"enum"`    // the only values allowed; none: any
}

// EmbeddedOptions are the options of the metadata this binary was built
// with, by name: what promote may set, and the defaults it leaves implicit.
func EmbeddedOptions() map[string]Option {
	var m struct {
		Options map[string]Option `json:"options"`
	}
	if err := json.Unmarshal(embedded, &m); err != nil {
		panic("features: the embedded devcontainer-feature.json does not parse: " + err.Error())
	}
	return m.Options
}
