package launcher

import (
	"fmt"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/egress"
	"golang.org/x/sys/unix"
)

// The launcher's descriptors are one table for the proxies, the warden and
// the launch itself; the sandbox's processes have their own, and reach the
// launcher's only through connections to its proxies. Go raises the soft
// RLIMIT_NOFILE to the hard limit when the launcher starts (and gives
// bwrap the original back), so the table is the hard limit. The proxies'
// connection bounds are chosen so that what the sandbox can make them hold
// leaves descriptorReserve free: the warden (a few per call, Workers calls
// at once) and the launch keep working when the proxies are full.
const (
	// descriptorReserve is what the proxies never spend: the warden's
	// and the launch's own, with room to spare.
	descriptorReserve = 256
	// descriptorsPerConn is what one proxied connection costs at most:
	// the sandbox's end, the upstream's, and one while a name is resolved.
	descriptorsPerConn = 3
	// minAuthConns and minEgressConns are the least the proxies serve
	// with: below them a limit refuses the launch.
	minAuthConns, minEgressConns = 8, 32
)

// connBounds are how many connections each proxy of a sandbox holds.
type connBounds struct{ auth, egress int }

// boundsFor the launcher's descriptor limit: the proxies' defaults when
// the limit has room for them beside the reserve, else a share of what is
// left, one part to the credential proxy and four to the allowlist proxy.
func boundsFor(limit uint64) (connBounds, error) {
	b := connBounds{authproxy.DefaultMaxConns, egress.DefaultMaxConns}
	need := uint64(descriptorReserve + descriptorsPerConn*(b.auth+b.egress))
	if limit >= need {
		return b, nil
	}
	least := uint64(descriptorReserve + descriptorsPerConn*(minAuthConns+minEgressConns))
	if limit < least {
		return connBounds{}, fmt.Errorf("RLIMIT_NOFILE (ulimit -n) is %d: too few descriptors for the launcher's proxies (at least %d: %d for %d connections, %d kept for the warden and the launch)",
			limit, least, least-descriptorReserve, minAuthConns+minEgressConns, descriptorReserve)
	}
	conns := int(limit-descriptorReserve) / descriptorsPerConn
	b.auth = conns / 5
	b.egress = conns - b.auth
	return b, nil
}

// launcherBounds are boundsFor the launcher's own limit.
func launcherBounds() (connBounds, error) {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err != nil {
		return connBounds{}, fmt.Errorf("cannot read RLIMIT_NOFILE: %w", err)
	}
	return boundsFor(l.Cur)
}
