package sandbox

import "github.com/claude-sandbox/claude-sandbox/forgepush"

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
