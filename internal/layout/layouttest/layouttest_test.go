package layouttest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

func TestFromEnv(t *testing.T) {
	for _, name := range []string{"CS_CONF", "CS_REAL", "CS_PASSWD", "CS_ALLOW_UNSANDBOXED", "CS_OUTSIDE_SETTINGS", "CS_INSIDE_SETTINGS", "CS_MASKS", "CS_BWRAP_PATHS"} {
		t.Setenv(name, "")
	}
	if diff := cmp.Diff(layout.Installed(), FromEnv()); diff != "" {
		t.Errorf("with no CS_* set, FromEnv is not the installed layout (-want +got):\n%s", diff)
	}
	t.Setenv("CS_CONF", "/w/conf")
	t.Setenv("CS_REAL", "/w/real")
	t.Setenv("CS_MASKS", "/run:/tmp")
	t.Setenv("CS_BWRAP_PATHS", "/w/bwrap")
	want := layout.Installed()
	want.Conf, want.RealBinary, want.Masks, want.Bwrap = "/w/conf", "/w/real", []string{"/run", "/tmp"}, []string{"/w/bwrap"}
	if diff := cmp.Diff(want, FromEnv()); diff != "" {
		t.Errorf("FromEnv (-want +got):\n%s", diff)
	}
}
