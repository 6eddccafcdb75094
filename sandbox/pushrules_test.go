package sandbox

import (
	"strings"
	"testing"
)

// The push keys become the gate's rules, each in its own list and order;
// a key without a line is the gate's default (nil).
func TestPushRules(t *testing.T) {
	c, err := ParseConf("c.conf", strings.NewReader("push-ref = refs/heads/claude/*\npush-ref = !refs/heads/claude/keep\npush-delete = refs/heads/claude/*\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.PushRules()
	if err != nil {
		t.Fatal(err)
	}
	if r.Update.String() != "refs/heads/claude/*, !refs/heads/claude/keep" || r.Delete.String() != "refs/heads/claude/*" || r.Force != nil {
		t.Errorf("PushRules = %v / %v / %v", r.Update, r.Delete, r.Force)
	}
	none, _ := (&Conf{}).PushRules()
	if none.Update != nil || none.Delete != nil || none.Force != nil {
		t.Errorf("PushRules without lines = %+v, want the defaults (nil)", none)
	}
	bad := &Conf{Source: "c.conf", PushForce: []Line{{"main", 3}}}
	if _, err := bad.PushRules(); err == nil || !strings.HasPrefix(err.Error(), "c.conf:3: ") {
		t.Errorf("PushRules of a bad line = %v, want an error naming c.conf:3", err)
	}
}
