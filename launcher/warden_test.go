package launcher

import (
	"io"
	"reflect"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/warden"
)

// TestServicesTakeThePlansNameRules: the warden is given every rule on
// names the plan states, as the plan states it, and the workspace and
// siblings of the launch. The plan's rules set every field, checked
// first, so that a field added to namerule.Rules is compared too. Red
// when the launcher copies the rules field by field and leaves one out.
func TestServicesTakeThePlansNameRules(t *testing.T) {
	rules := namerule.Rules{
		Outside:        []namerule.Outside{{Name: ".git", Why: "outside"}},
		Dirs:           []namerule.InDir{{Dir: "/w/tools", Names: []string{"toolchain"}, Why: "a selector"}},
		Paths:          []namerule.Path{{Path: "/w/.vscode", Why: "a protected path"}},
		InNamedDirs:    []namerule.InNamedDir{{Dir: ".claude", Names: []string{"settings.json"}, Why: "settings"}},
		GitDirs:        []namerule.GitDir{{Dir: "/w/.git", Tops: []string{"/w"}}},
		GitStore:       &namerule.GitStore{Dir: "/home/u/.cache/git", Inside: "/run/git"},
		InsideOnly:     []string{"/run/git"},
		Checkouts:      []string{"/w/.claude/worktrees"},
		CheckoutNames:  []string{".git", ".hg"},
		CopyThrough:    []namerule.CopyThrough{{Dir: "/w/.git", Name: "config", Store: "/s/config", Launch: "/s/config.launch"}},
		PrivateNetwork: true,
	}
	v := reflect.ValueOf(rules)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test's rules leave %s unset: set it, so that the warden is checked to get it", v.Type().Field(i).Name)
		}
	}
	siblings := &warden.Siblings{}
	pr := &Prepared{Plan: &sandbox.Plan{Workspace: "/w", NameRules: rules}, Launch: sandbox.Launch{Home: t.TempDir()}, Running: running{siblings: siblings}}
	s, err := newServices(pr, nil, connBounds{}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer s.control.Close()
	defer s.child.Close()
	if !reflect.DeepEqual(s.rules.Rules, rules) {
		t.Errorf("the warden's rules on names are\n%+v\nnot the plan's\n%+v", s.rules.Rules, rules)
	}
	if s.rules.Workspace != "/w" || s.rules.Siblings != siblings {
		t.Errorf("the warden's workspace is %q and siblings %p, not the launch's %q and %p", s.rules.Workspace, s.rules.Siblings, "/w", siblings)
	}
}
