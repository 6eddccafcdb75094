package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// In a background session's sandbox, which its first process's environment
// names (ADR 0026), the plan verify recomputes is that sandbox's: the
// service's shared sockets and the inside wrapper are planned mounts, and
// the variables that name them planned variables; in any other sandbox,
// none of them is.
func TestRecomputedPlanHasTheBackgroundRole(t *testing.T) {
	dir := t.TempDir()
	passwd := filepath.Join(dir, "passwd")
	home, ws := filepath.Join(dir, "home"), filepath.Join(dir, "proj")
	for _, d := range []string{home, ws} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	line := fmt.Sprintf("me:x:%d:%d::%s:/bin/sh\n", os.Getuid(), os.Getgid(), home)
	if err := os.WriteFile(passwd, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := sandbox.ParseConf("test.conf", strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"", "client", "service"} {
		env := []string{"PWD=" + ws}
		if role != "" {
			env = append(env, sandbox.BackgroundRoleVar+"="+role)
		}
		f := &facts{paths: layout.Layout{Passwd: passwd, Masks: []string{}}, conf: c, startEnv: env}
		lv, err := f.recomputeLaunch()
		if err != nil {
			t.Fatalf("role %q: %v", role, err)
		}
		mounts, vars := finalMounts(lv.plan), planEnv(lv.plan)
		for _, point := range []string{sandbox.DaemonSocketDir(os.Getuid()), layout.InsideWrapper} {
			if _, ok := mounts[point]; ok != (role != "") {
				t.Errorf("role %q: a planned mount at %s is %v", role, point, ok)
			}
		}
		if got := vars[sandbox.BackgroundRoleVar]; got != role {
			t.Errorf("role %q: the plan's %s is %q", role, sandbox.BackgroundRoleVar, got)
		}
		if _, ok := vars["CLAUDE_CODE_PROCESS_WRAPPER"]; ok != (role != "") {
			t.Errorf("role %q: CLAUDE_CODE_PROCESS_WRAPPER planned: %v", role, ok)
		}
	}
}
