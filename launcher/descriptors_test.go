package launcher

import (
	"strings"
	"testing"
)

// What the proxies can hold leaves the reserve free, at every limit the
// launch accepts; a limit without room refuses the launch.
func TestBoundsFor(t *testing.T) {
	for _, limit := range []uint64{376, 377, 1024, 2175, 2176, 4096, 20000, 1 << 20} {
		b, err := boundsFor(limit)
		if err != nil {
			t.Errorf("boundsFor(%d): %v", limit, err)
			continue
		}
		if b.auth < minAuthConns || b.egress < minEgressConns || b.auth > 128 || b.egress > 512 {
			t.Errorf("boundsFor(%d) = %+v: outside the least and the defaults", limit, b)
		}
		if spent := uint64(descriptorsPerConn * (b.auth + b.egress)); spent+descriptorReserve > limit {
			t.Errorf("boundsFor(%d) = %+v: the proxies can hold %d descriptors, leaving fewer than %d", limit, b, spent, descriptorReserve)
		}
	}
	if b, _ := boundsFor(20000); b != (connBounds{128, 512}) {
		t.Errorf("boundsFor(20000) = %+v; want the defaults", b)
	}
	_, err := boundsFor(375)
	if err == nil || !strings.HasPrefix(err.Error(), "RLIMIT_NOFILE (ulimit -n) is 375: too few descriptors for the launcher's proxies (at least 376: 120 for 40 connections, 256 kept for the warden and the launch)") {
		t.Errorf("boundsFor(375) = %v; want a refusal", err)
	}
}
