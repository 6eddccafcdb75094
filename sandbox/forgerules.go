package sandbox

import (
	"fmt"

	"github.com/claude-sandbox/claude-sandbox/forgeapi"
	"github.com/claude-sandbox/claude-sandbox/forgepush"
)

// PushRules are the forge gate's rules from push-ref, push-delete and
// push-force: a key without a line is nil, the gate's default.
func (c *Conf) PushRules() (forgepush.Rules, error) {
	var r forgepush.Rules
	for _, k := range []struct {
		lines []Line
		to    *forgepush.List
	}{{c.PushRef, &r.Update}, {c.PushDelete, &r.Delete}, {c.PushForce, &r.Force}} {
		for _, l := range k.lines {
			p, err := forgepush.ParsePattern(l.Value)
			if err != nil {
				return forgepush.Rules{}, &ConfError{File: c.Source, Line: l.Line, Msg: err.Error()}
			}
			*k.to = append(*k.to, p)
		}
	}
	return r, nil
}

// ForgeAPIRules are the forge request gate's rules: the conf's forge-api
// lines on every forge host, over the policy's defaults on the GitHub API.
func (c *Conf) ForgeAPIRules() (forgeapi.Rules, error) {
	var r forgeapi.Rules
	for _, d := range forgeAPIWrites {
		rule, err := forgeapi.ParseRule(d.rule)
		if err != nil {
			return forgeapi.Rules{}, fmt.Errorf("the policy's forge API write %q: %w", d.rule, err)
		}
		r.Defaults = append(r.Defaults, rule)
	}
	for _, l := range c.ForgeAPI {
		rule, err := forgeapi.ParseRule(l.Value)
		if err != nil {
			return forgeapi.Rules{}, &ConfError{File: c.Source, Line: l.Line, Msg: "forge-api: " + err.Error()}
		}
		r.Admin = append(r.Admin, rule)
	}
	return r, nil
}
