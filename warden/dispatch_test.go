package warden

import "testing"

// Every call the warden answers decodes to an operation of one of the
// tables: of names for carryOut, of sockets for socketCall, as handle
// routes it; umask, which handle lets go on, to neither.
func TestEveryCallHasAnOperation(t *testing.T) {
	for _, c := range calls() {
		if c.decode == nil {
			continue
		}
		o := c.decode([6]uint64{}).op
		if int(o) >= len(opNames) || opNames[o] == "" {
			t.Errorf("%s: op %d has no name in the counts (counts.go)", c.name(), o)
		}
		if o == opUmask {
			if _, inTable := fileOps[o]; inTable || socketOps[o] != nil {
				t.Errorf("%s: umask is in a table", c.name())
			}
			continue
		}
		_, onName := fileOps[o]
		_, onSocket := socketOps[o]
		if onName == onSocket || onSocket != (o >= opBind) {
			t.Errorf("%s: op %d is in the names' table %v, the sockets' %v; handle sends it to the sockets' %v", c.name(), o, onName, onSocket, o >= opBind)
		}
	}
}
