package sandbox

import (
	"slices"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
)

// TestSessionEnvDoubled: a CLAUDE_SANDBOX_* variable defined twice is read
// by the door's rule, its first definition, as every other variable (red
// with ParseSessionEnv reading the list itself: the protect paths come
// twice, with the last value, and the doubled no-forge is refused for its
// second value).
func TestSessionEnvDoubled(t *testing.T) {
	s, err := ParseSessionEnv(launchenv.Read([]string{
		"CLAUDE_SANDBOX_PROTECT=first", "CLAUDE_SANDBOX_NO_FORGE=1",
		"CLAUDE_SANDBOX_PROTECT=second", "CLAUDE_SANDBOX_NO_FORGE=0",
	}))
	if err != nil || !slices.Equal(s.Protect, []string{"first"}) || !s.NoForge {
		t.Errorf("ParseSessionEnv = %+v, %v; want protect [first] and no-forge", s, err)
	}
	if _, err := ParseSessionEnv(launchenv.Read([]string{"CLAUDE_SANDBOX_NETWORK=open", "CLAUDE_SANDBOX_NETWORK="})); err == nil {
		t.Error("a widening variable, then the same name empty: not refused")
	}
}
