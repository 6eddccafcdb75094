package installer

import (
	"testing"

	"github.com/claude-sandbox/claude-sandbox/templates"
	"github.com/google/go-cmp/cmp"
)

// check parses the lines values lists, so those must be every line with a
// value that the template stamps, in its order.
func TestValuesAreTheTemplatesLines(t *testing.T) {
	c := ConfOptions{
		WorkspaceRoot: "/w", AllowWrite: []string{"/a", "/b"}, AllowWriteExecutable: []string{"/x"}, SandboxCache: []string{"go/pkg/mod"}, PassEnv: []string{"E"}, Protect: []string{"p/"},
		ShareHome: []string{".h"}, AppendPath: []string{"/bin2"}, NoForge: true, Network: "open",
		AllowDomain: []string{"example.com", "*.example.org:8443"}, AllowIP: []string{"10.0.0.0/8"}, Credentials: "inside",
	}
	rendered, err := templates.Render("claude-sandbox.conf.tmpl", c)
	if err != nil {
		t.Fatal(err)
	}
	var stamped []string
	for _, l := range splitLines(string(rendered)) {
		if key, _ := confLine(l); key != "" && key != "no-forge" {
			stamped = append(stamped, l)
		}
	}
	var checked []string
	for _, kv := range c.values() {
		checked = append(checked, kv[0]+" = "+kv[1])
	}
	if diff := cmp.Diff(stamped, checked); diff != "" {
		t.Errorf("the template's lines (-) and the values check parses (+) differ:\n%s", diff)
	}
}
