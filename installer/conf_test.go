package installer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The options make a line per value in the order of sandbox.ConfKeys; a
// single-valued key's last value counts, and a bare flag's.
func TestConfOptionsRender(t *testing.T) {
	c := ConfOptions{
		"credentials": {"inside"}, "allow-ip": {"10.0.0.0/8"}, "allow-domain": {"example.com", "*.example.org:8443"},
		"network": {"allowlist", "open"}, "no-forge": {"false", "true"}, "append-path": {"/bin2"}, "share-home": {".h"},
		"protect": {"p/"}, "pass-env": {"E"}, "sandbox-cache": {"go/pkg/mod"}, "allow-write-executable": {"/x"},
		"allow-write": {"/a", "/b"}, "workspace-root": {"/w"},
	}
	if err := c.check(); err != nil {
		t.Fatal(err)
	}
	got, err := c.render()
	if err != nil {
		t.Fatal(err)
	}
	want := `# /etc/claude-sandbox.conf: the sandbox policy for ` + "`claude`" + `.
# Written by ` + "`claude-sandbox install`" + `; lines you add or change are kept by
# later installs. Reference: docs/configuration.md in the claude-sandbox repo.
workspace-root = /w
allow-write = /a
allow-write = /b
allow-write-executable = /x
sandbox-cache = go/pkg/mod
pass-env = E
protect = p/
share-home = .h
append-path = /bin2
no-forge
network = open
allow-domain = example.com
allow-domain = *.example.org:8443
allow-ip = 10.0.0.0/8
credentials = inside
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("rendered conf (-want +got):\n%s", diff)
	}
	none, err := ConfOptions{"network": {"open", ""}, "no-forge": {"true", "false"}}.render()
	if err != nil {
		t.Fatal(err)
	}
	if l := splitLines(string(none)); len(l) != 3 {
		t.Errorf("a single-valued key last given \"\" and a flag last given false made lines:\n%s", none)
	}
}

// check refuses what the conf would, naming the flag.
func TestConfOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		c   ConfOptions
		err string
	}{
		{ConfOptions{"network": {"closed"}}, `--network: "closed" is not a mode (open or allowlist)`},
		{ConfOptions{"allow-write": {"/a", "b"}}, `--allow-write: "b" is not an absolute path`},
		{ConfOptions{"pass-env": {" "}}, `--pass-env: the value is empty`},
		{ConfOptions{"protect": {"a\nallow-write = /"}}, `--protect: "a\nallow-write = /" is more than one line`},
		{ConfOptions{"egress-jail": {"true"}}, `--egress-jail: not a conf key`},
		{ConfOptions{"alow-write": {"/a"}}, `--alow-write: not a conf key`},
	} {
		err := tc.c.check()
		if err == nil || err.Error() != tc.err {
			t.Errorf("%v: got %v, want %s", tc.c, err, tc.err)
		}
	}
}
