package layout

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

func TestStatusLineRunsTheLauncher(t *testing.T) {
	var s struct {
		Type, Command string
		Padding       int
	}
	if err := json.Unmarshal([]byte(StatusLine), &s); err != nil {
		t.Fatalf("StatusLine is not JSON: %v", err)
	}
	if s.Type != "command" || s.Command != LauncherBinary+" statusline" {
		t.Errorf("StatusLine runs %q (%s), want %q", s.Command, s.Type, LauncherBinary+" statusline")
	}
}

func TestInstalledPathsAreAbsolute(t *testing.T) {
	l := Installed()
	for _, p := range append([]string{l.Conf, l.RealBinary, l.Passwd, l.AllowUnsandboxed, l.OutsideSettings, l.InsideSettings,
		LauncherBinary, LauncherLink, ToolLink, ManagedSettings, VerifySlashCommand, SystemGitConfig, SharedConfig,
		InstallLock, InsideMarker, InitPath, NativeHomeCache, NPMCache}, l.Bwrap...) {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			t.Errorf("%q is not a clean absolute path", p)
		}
	}
	if filepath.IsAbs(DenialsLog) {
		t.Errorf("DenialsLog %q must be relative to the home", DenialsLog)
	}
	if l.Masks != nil {
		t.Errorf("Installed().Masks = %q, want nil (the host's own masks)", l.Masks)
	}
}

// A caller that changes its layout changes no one else's.
func TestInstalledIsAFreshValue(t *testing.T) {
	a := Installed()
	a.Bwrap[0] = "/elsewhere/bwrap"
	if b := Installed(); b.Bwrap[0] == "/elsewhere/bwrap" {
		t.Error("Installed shares its bwrap list between callers")
	}
}
