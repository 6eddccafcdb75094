// Package templates holds the files the installer stamps, embedded in the
// binary and rendered with sprig's hermetic function map (no environment,
// no clock, no randomness: the same options always give the same bytes).
package templates

import (
	"bytes"
	"embed"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

//go:embed *.tmpl
var files embed.FS

// Render executes the named template with data.
func Render(name string, data any) ([]byte, error) {
	t, err := template.New(name).Funcs(sprig.HermeticTxtFuncMap()).ParseFS(files, name)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
