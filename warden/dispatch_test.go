package warden

import "testing"

// Every call the warden answers decodes to an operation of one of the
// tables: of names for carryOut, of sockets for socketCall, as handle
// routes it.
func TestEveryCallHasAnOperation(t *testing.T) {
	for _, c := range calls() {
		if c.decode == nil {
			continue
		}
		o := c.decode([6]uint64{}).op
		_, onName := fileOps[o]
		_, onSocket := socketOps[o]
		if onName == onSocket || onSocket != (o >= opBind) {
			t.Errorf("%s: op %d is in the names' table %v, the sockets' %v; handle sends it to the sockets' %v", c.name, o, onName, onSocket, o >= opBind)
		}
	}
}
